"""The dashboard in headless Chromium, against a real `kakin serve` (see scripts/browser-test)."""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

BUNDLE_ID = "com.example.kakin"
CUSTOMER = "alice"
STEP_TIMEOUT = 30


def say(message):
    print(f"scripts/browser-test: {message}", flush=True)


class Failure(Exception):
    pass


def free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def call(method, url, body=None, headers=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    with urllib.request.urlopen(request, timeout=15) as response:
        text = response.read().decode()
        return json.loads(text) if text else None


class Server:
    """`kakin serve` in a temporary data directory; stopped with SIGTERM."""

    def __init__(self, binary):
        self.directory = tempfile.mkdtemp(prefix="kakin-browser-")
        self.port, self.sandbox_port = free_ports(2)
        self.log_path = os.path.join(self.directory, "server.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [binary, "serve", "--data", os.path.join(self.directory, "data"), "--port", str(self.port),
             "--sandbox-port", str(self.sandbox_port)],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 120
        while time.time() < deadline:
            text = open(self.log_path).read()
            match = re.search(r"secret key:\s*(\S+)", text)
            publishable = re.search(r"publishable key:\s*(\S+)", text)
            if match and publishable:
                self.secret, self.publishable = match.group(1), publishable.group(1)
                break
            if self.process.poll() is not None:
                raise Failure("kakin serve exited before it was ready:\n" + text)
            time.sleep(0.1)
        else:
            raise Failure("kakin serve printed no banner within 120 s")
        self.base = f"http://127.0.0.1:{self.port}"
        self.sandbox = f"http://127.0.0.1:{self.sandbox_port}"

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    def buy(self, tester, product, user=CUSTOMER):
        """Buys in the sandbox as the device does and uploads the transaction as the app does."""
        answer = call("POST", f"{self.sandbox}/v1/device/payments", {"testerID": tester, "productID": product})
        if answer.get("state") != "purchased":
            return answer
        jws = answer["transaction"]["jwsRepresentation"]
        call("POST", f"{self.base}/v1/transactions?nonce=1",
             {"bundleId": BUNDLE_ID, "appUserId": user, "signedTransaction": jws},
             {"X-Kakin-Key": self.publishable})
        return answer


class Browser:
    def __init__(self, artifacts):
        self.artifacts = artifacts
        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                         "--window-size=1280,1000", "--hide-scrollbars"):
            options.add_argument(argument)
        service = Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
        self.driver = webdriver.Chrome(options=options, service=service)
        self.driver.set_page_load_timeout(STEP_TIMEOUT)
        self.width = None

    def go(self, url):
        self.driver.get(url)

    def find(self, selector):
        return self.driver.find_element(By.CSS_SELECTOR, selector)

    def finds(self, selector):
        return self.driver.find_elements(By.CSS_SELECTOR, selector)

    def wait_for(self, description, predicate, reload=False):
        deadline = time.time() + STEP_TIMEOUT
        while time.time() < deadline:
            if predicate():
                return
            time.sleep(0.5)
            if reload:
                self.driver.refresh()
        raise Failure(f"timed out waiting for {description} on {self.driver.current_url}")

    def screenshot(self, name):
        os.makedirs(self.artifacts, exist_ok=True)
        path = os.path.join(self.artifacts, f"{name}.png")
        # The whole page: the window grows to the document's height first.
        height = self.driver.execute_script(
            "return Math.max(document.body.scrollHeight, document.documentElement.scrollHeight)")
        if self.width is None:
            self.driver.set_window_size(1280, max(800, min(height + 20, 4000)))
        else:
            self.emulate(self.width, max(700, min(height, 4000)))
        self.driver.save_screenshot(path)
        if self.width is None:
            self.driver.set_window_size(1280, 1000)
        return path

    def emulate(self, width, height=812):
        self.width = width
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": True})

    def overflow(self):
        return self.driver.execute_script(
            "return Math.max(document.documentElement.scrollWidth, document.body.scrollWidth) - window.innerWidth")

    def quit(self):
        self.driver.quit()


def run(arguments):
    server = Server(arguments.binary)
    browser = None
    shots = []
    try:
        say(f"kakin serve on {server.base} (sandbox {server.sandbox})")
        call("POST", f"{server.sandbox}/v1/control/testers",
             {"id": "browser", "name": "browser@example.com", "storefront": "USA"})
        call("POST", f"{server.sandbox}/v1/control/testers",
             {"id": "kid", "name": "kid@example.com", "storefront": "JPN", "asksToBuy": True})
        purchase = server.buy("browser", f"{BUNDLE_ID}.removeAd")
        transaction_id = purchase["transaction"]["transaction"]["transactionId"]
        server.buy("browser", f"{BUNDLE_ID}.increasePoints")
        server.buy("browser", f"{BUNDLE_ID}.premium.monthly")
        server.buy("kid", f"{BUNDLE_ID}.unlock")  # waits for approval
        say(f"{CUSTOMER} bought remove ads as transaction {transaction_id}")
        # Subscribers in two storefronts: free trials, and trials upgraded at once to a paid year.
        for tester, storefront, user, upgrades in (("ben", "USA", "ben", True), ("hana", "JPN", "hana", True),
                                                   ("kai", "JPN", "kai", False), ("liz", "GBR", "liz", True)):
            call("POST", f"{server.sandbox}/v1/control/testers",
                 {"id": tester, "name": f"{tester}@example.com", "storefront": storefront})
            server.buy(tester, f"{BUNDLE_ID}.premium.monthly", user=user)
            if upgrades:
                server.buy(tester, f"{BUNDLE_ID}.premium.yearly", user=user)
        server.buy("ben", f"{BUNDLE_ID}.increasePoints", user="ben")

        browser = Browser(arguments.artifacts)
        # 1. Nothing without signing in; then sign in with the secret key.
        browser.go(f"{server.base}/dashboard/customers")
        if not browser.driver.current_url.endswith("/dashboard/login"):
            raise Failure(f"an anonymous visitor reached {browser.driver.current_url}")
        shots.append(browser.screenshot("login"))
        browser.find("#password").send_keys(server.secret)
        browser.find("form[action='/dashboard/login'] button").click()
        browser.wait_for("the overview", lambda: browser.finds("svg.chart"))

        # 2. Find the customer by user ID and see the entitlement.
        browser.go(f"{server.base}/dashboard/customers")
        browser.find("#q").send_keys(CUSTOMER[:3])
        browser.find("form.search button").click()
        browser.wait_for("the search result", lambda: browser.finds("a.customer-link"))
        shots.append(browser.screenshot("customers"))
        browser.find("a.customer-link").click()
        entitlement = "[data-entitlement='removeAds']"
        browser.wait_for("the customer's entitlement", lambda: browser.finds(entitlement))
        if browser.find(entitlement).get_attribute("data-state") != "active":
            raise Failure("the purchase did not give the removeAds entitlement")
        customer_url = browser.driver.current_url
        say("the customer page shows removeAds active")

        # 3. Refund the purchase from the transaction manager.
        browser.go(f"{server.base}/dashboard/sandbox")
        row = f"tr[data-transaction='{transaction_id}']"
        browser.wait_for("the transaction in the transaction manager", lambda: browser.finds(row))
        shots.append(browser.screenshot("transaction-manager"))
        browser.find(f"{row} select[name='reason']").send_keys("app issue")
        browser.find(f"{row} button[data-action='refund']").click()
        browser.wait_for("the refund's notice", lambda: browser.finds("p.notice"))
        if "refunded" not in browser.find("p.notice").text:
            raise Failure(f"unexpected notice: {browser.find('p.notice').text}")
        say("refunded from the transaction manager")

        # 4. The sandbox sends REFUND to the server; the entitlement goes.
        browser.go(customer_url)
        browser.wait_for("the entitlement to be revoked",
                         lambda: browser.finds(entitlement)
                         and browser.find(entitlement).get_attribute("data-state") == "revoked", reload=True)
        shots.append(browser.screenshot("customer"))
        say("the customer page shows removeAds revoked")

        browser.go(f"{server.base}/dashboard/activity")
        browser.wait_for("the REFUND notification", lambda: "REFUND" in browser.find("main").text, reload=True)
        shots.append(browser.screenshot("activity"))
        browser.go(f"{server.base}/dashboard")
        if browser.find("[data-figure='refunds']").text != "1":
            raise Failure("the overview does not count the refund")
        shots.append(browser.screenshot("overview"))

        # 5. The subscription metrics, by storefront: the job brings them up to date within seconds.
        browser.go(f"{server.base}/dashboard?range=14&granularity=day&breakdown=storefront")
        browser.wait_for("the monthly recurring revenue of three storefronts",
                         lambda: {"USA", "JPN", "GBR"} <= {item.text for item in
                                                          browser.finds("figure[data-metric='mrr'] ul.legend li")},
                         reload=True)
        for metric in ("mrr", "active_subscriptions", "active_trials", "churn", "trial_conversion", "revenue"):
            if not browser.finds(f"figure[data-metric='{metric}']"):
                raise Failure(f"the overview has no {metric} chart")
        if not browser.finds("table.cohorts"):
            raise Failure("the overview has no cohort table")
        shots.append(browser.screenshot("metrics"))
        say("the overview charts the subscription metrics by storefront")

        # 6. Every page at 375 px: no horizontal overflow.
        browser.emulate(375)
        pages = {"overview": "/dashboard?breakdown=storefront", "customers": f"/dashboard/customers?q={CUSTOMER}",
                 "customer": urllib.parse.urlsplit(customer_url)._replace(scheme="", netloc="").geturl(),
                 "activity": "/dashboard/activity", "transaction-manager": "/dashboard/sandbox"}
        for name, path in pages.items():
            browser.go(server.base + path)
            overflow = browser.overflow()
            if overflow > 0:
                raise Failure(f"{path} is {overflow} px wider than a 375 px screen")
            shots.append(browser.screenshot(f"{name}-375"))
        say("every page fits 375 px")
    finally:
        if browser is not None:
            browser.quit()
        server.stop()
    say(f"screenshots: {arguments.artifacts}")
    if arguments.update_docs:
        os.makedirs(arguments.docs, exist_ok=True)
        for path in shots:
            name = os.path.basename(path)
            if name in ("login.png", "overview.png", "metrics.png", "customers.png", "customer.png", "activity.png",
                        "transaction-manager.png", "customer-375.png"):
                shutil.copy(path, os.path.join(arguments.docs, name))
        say(f"copied the screenshots to {arguments.docs}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--artifacts", required=True)
    parser.add_argument("--docs", required=True)
    parser.add_argument("--update-docs", action="store_true")
    arguments = parser.parse_args()
    try:
        run(arguments)
    except (Failure, urllib.error.URLError) as error:
        say(f"FAILED: {error}")
        sys.exit(1)
    say("passed")


if __name__ == "__main__":
    main()
