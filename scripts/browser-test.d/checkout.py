"""The web checkout in headless Chromium, against a real `kakin serve` whose app sells on the web
through localstripe (see scripts/browser-test; run under `scripts/localstripe run`, which sets
KAKIN_TEST_STRIPE_URL).

Gets a checkout link through the API, opens it, types a card into the Stripe.js stand-in's fields,
pays, and checks that the browser lands on the return URL (served here), that the emulator holds a
succeeded payment intent with the metadata the applier of Stripe's events reads, and that the
emulator's webhook made the server grant the entitlement. Then, through the emulator and the server
alone: a subscription bought on the page and granted; renewed; its next renewal failing (the card's authentication
refused), which puts it in its grace period with a billing problem; a refund of the first purchase,
which takes its entitlement back; a purchase whose webhook never arrives, recorded by the
reconciliation; and a declined card, whose refusal the page shows."""

import argparse
import hashlib
import hmac
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dashboard import BUNDLE_ID, STEP_TIMEOUT, Browser, Failure, call, free_ports, say  # noqa: E402

PRODUCT = "com.example.kakin.unlock"
MONTHLY = "com.example.kakin.premium.monthly"
WEBHOOK_SECRET = "whsec_browser0123456789"
WEBHOOK_ID = "kakin_browser"
SECRET_KEY = "sk_test_kakin"
PUBLISHABLE_KEY = "pk_test_kakin"


def stripe(method, base, path, form=None):
    """One call of the emulator's API with the secret key; `form` is form-encoded."""
    data = None if form is None else urllib.parse.urlencode(form).encode()
    request = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"Authorization": f"Bearer {SECRET_KEY}"})
    with urllib.request.urlopen(request, timeout=15) as response:
        text = response.read().decode()
        return json.loads(text) if text else None


class ReturnPage:
    """The app's return URL, played by a tiny HTTP server on a free loopback port."""

    def __init__(self):
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = b"<!doctype html><title>Back in the app</title><h1 id='returned'>Back in the app</h1>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *arguments):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()


class CheckoutServer:
    """`kakin serve` with a configuration file whose `stripe` points at the emulator."""

    def __init__(self, binary, stripe_url, plans, return_base):
        self.directory = tempfile.mkdtemp(prefix="kakin-checkout-")
        self.port, self.sandbox_port = free_ports(2)
        config = os.path.join(self.directory, "serve.json")
        with open(config, "w") as file:
            json.dump({"stripe": {
                "secretKey": SECRET_KEY, "webhookSecrets": [WEBHOOK_SECRET], "apiBase": stripe_url,
                "publishableKey": PUBLISHABLE_KEY, "returnUrls": [return_base],
                "products": [{"productId": product, "price": plan} for product, plan in plans.items()],
            }}, file)
        self.log_path = os.path.join(self.directory, "server.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [binary, "serve", "--config", config, "--data", os.path.join(self.directory, "data"),
             "--port", str(self.port), "--sandbox-port", str(self.sandbox_port), "--reconcile-interval", "2"],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 120
        while time.time() < deadline:
            text = open(self.log_path).read()
            publishable = re.search(r"publishable key:\s*(\S+)", text)
            if publishable:
                self.publishable = publishable.group(1)
                break
            if self.process.poll() is not None:
                raise Failure("kakin serve exited before it was ready:\n" + text)
            time.sleep(0.1)
        else:
            raise Failure("kakin serve printed no banner within 120 s")
        self.base = f"http://127.0.0.1:{self.port}"

    def link(self, user, return_url, product=PRODUCT):
        return call("POST", f"{self.base}/v1/checkout/{BUNDLE_ID}/links",
                    {"appUserId": user, "productId": product, "returnUrl": return_url},
                    {"X-Kakin-Key": self.publishable, "Content-Type": "application/json"})

    def customer(self, user):
        """The customer as the server answers for them."""
        answer = call("GET", f"{self.base}/v1/customers/{user}?bundleId={BUNDLE_ID}&nonce={uuid.uuid4().hex}",
                      headers={"X-Kakin-Key": self.publishable})
        return answer.get("customer", {})

    def entitlement(self, user, identifier):
        """The customer's entitlement `identifier` as the server answers it, or None."""
        entitlements = self.customer(user).get("entitlements", [])
        return next((e for e in entitlements if e.get("identifier") == identifier), None)

    def post_webhook(self, event_type, object_id, object_type):
        """Posts one of Stripe's events as Stripe signs it (for what the emulator never sends)."""
        body = json.dumps({
            "id": f"evt_{uuid.uuid4().hex[:16]}", "object": "event", "api_version": "2024-06-20",
            "created": int(time.time()), "livemode": False, "type": event_type,
            "data": {"object": {"id": object_id, "object": object_type}}}).encode()
        timestamp = int(time.time())
        signature = hmac.new(WEBHOOK_SECRET.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
        request = urllib.request.Request(
            f"{self.base}/v1/notifications/stripe/{BUNDLE_ID}", data=body, method="POST",
            headers={"Content-Type": "application/json", "Stripe-Signature": f"t={timestamp},v1={signature}"})
        with urllib.request.urlopen(request, timeout=15) as response:
            return json.loads(response.read().decode())

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


def type_card(browser, number):
    """Types a card into the Stripe.js stand-in's fields (number, month, year, CVC, postal code)."""
    browser.wait_for("the card fields", lambda: len(browser.finds("#card input")) == 5)
    for field, value in (("number", number), ("exp_month", "12"), ("exp_year", "34"), ("cvc", "123"),
                         ("postal_code", "10001")):
        browser.find(f"#card input[placeholder='{field}']").send_keys(value)


def wait_until(what, probe, timeout=45):
    """Polls `probe` until it answers something true; that answer."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.25)
    raise Failure(f"timed out after {timeout} s waiting for {what}")


def register_webhook(stripe_url, url):
    """Has the emulator deliver every event to `url`, signed with the app's webhook secret."""
    stripe("POST", stripe_url, f"/_config/webhooks/{WEBHOOK_ID}", {"url": url, "secret": WEBHOOK_SECRET})


def pay_on_page(browser, link, return_url, card="4242424242424242"):
    """Opens a checkout link, pays with `card` and waits for the return URL."""
    browser.go(link["url"])
    type_card(browser, card)
    browser.find("#pay").click()
    browser.wait_for("the return URL", lambda: browser.driver.current_url.startswith(return_url))


def customer_of(stripe_url, user):
    customers = stripe("GET", stripe_url, "/v1/customers?limit=100")["data"]
    mine = [c for c in customers if c.get("metadata", {}).get("kakin_app_user_id") == user]
    if not mine:
        raise Failure(f"no Stripe customer for {user}")
    return mine[-1]["id"]


def fail_renewal(stripe_url, customer, subscription):
    """Bills the subscription's next period with a card whose authentication the customer refuses:
    the emulator's way to a failed renewal (it marks the subscription past due and sends
    invoice.payment_failed)."""
    token = stripe("POST", stripe_url, "/v1/tokens", {
        "card[number]": "4000002760003184", "card[exp_month]": "12", "card[exp_year]": "2034",
        "card[cvc]": "123", "key": PUBLISHABLE_KEY})["id"]
    card = stripe("POST", stripe_url, f"/v1/customers/{customer}/sources", {"source": token})["id"]
    stripe("POST", stripe_url, f"/v1/customers/{customer}", {"default_source": card})
    invoice = stripe("POST", stripe_url, "/v1/invoices", {"customer": customer, "subscription": subscription})
    billed = stripe("POST", stripe_url, f"/v1/invoices/{invoice['id']}/pay")
    intent = stripe("GET", stripe_url, f"/v1/payment_intents/{billed['payment_intent']}")
    stripe("POST", stripe_url, f"/v1/payment_intents/{intent['id']}/_authenticate",
           {"client_secret": intent["client_secret"], "success": "false"})


def run(arguments):
    stripe_url = os.environ.get("KAKIN_TEST_STRIPE_URL")
    if not stripe_url:
        raise Failure("KAKIN_TEST_STRIPE_URL is not set: run under scripts/localstripe run")
    suffix = uuid.uuid4().hex[:8]
    plan = stripe("POST", stripe_url, "/v1/plans", {
        "id": f"kakin_unlock_{suffix}", "amount": "999", "currency": "usd", "interval": "month",
        "product[name]": "Unlock"})["id"]
    monthly = stripe("POST", stripe_url, "/v1/plans", {
        "id": f"kakin_monthly_{suffix}", "amount": "499", "currency": "usd", "interval": "month",
        "product[name]": "Premium"})["id"]
    returned = ReturnPage()
    server = CheckoutServer(arguments.binary, stripe_url, {PRODUCT: plan, MONTHLY: monthly}, returned.base)
    register_webhook(stripe_url, f"{server.base}/v1/notifications/stripe/{BUNDLE_ID}")
    browser = Browser(arguments.artifacts)
    try:
        user = f"web-{uuid.uuid4().hex[:8]}"
        return_url = returned.base + "done"
        link = server.link(user, return_url)
        say(f"checkout link for {user}: {link['url'][:80]}…")
        browser.go(link["url"])
        heading = browser.find("#product").text
        price = browser.find("#price").text
        if "$9.99" not in price:
            raise Failure(f"the page shows the price {price!r}, not $9.99")
        say(f"the page sells {heading!r} at {price!r}")
        type_card(browser, "4242424242424242")
        browser.screenshot("checkout-card")
        browser.find("#pay").click()
        browser.wait_for("the return URL", lambda: browser.driver.current_url.startswith(return_url))
        landed = urllib.parse.urlparse(browser.driver.current_url)
        query = urllib.parse.parse_qs(landed.query)
        if query.get("status") != ["succeeded"] or query.get("product") != [PRODUCT]:
            raise Failure(f"landed on {browser.driver.current_url}, without status=succeeded&product={PRODUCT}")
        say(f"landed on {browser.driver.current_url}")

        intents = stripe("GET", stripe_url, "/v1/payment_intents?limit=100")["data"]
        mine = [i for i in intents if i.get("metadata", {}).get("kakin_app_user_id") == user]
        if len(mine) != 1:
            raise Failure(f"expected one payment intent for {user} in the emulator; found {len(mine)}")
        intent = mine[0]
        expected = {"kakin_app_user_id": user, "kakin_product_id": PRODUCT, "kakin_price": plan, "kakin_quantity": "1"}
        if intent["status"] != "succeeded" or intent["metadata"] != expected or intent["amount"] != 999:
            raise Failure(f"the payment intent is not the contract's: {json.dumps(intent)[:600]}")
        customer = stripe("GET", stripe_url, f"/v1/customers/{intent['customer']}")
        if customer.get("metadata") != {"kakin_app_user_id": user, "kakin_bundle_id": BUNDLE_ID}:
            raise Failure(f"the customer's metadata is not the contract's: {customer.get('metadata')}")
        say(f"payment intent {intent['id']} succeeded with the contract's metadata")

        # The emulator's webhook reaches the server, which applies it: the purchase is granted.
        unlock = wait_until("the web purchase's entitlement", lambda: (
            e := server.entitlement(user, "unlock")) and e.get("isActive") and e)
        if unlock.get("store") != "stripe" or unlock.get("transactionId") != intent["id"]:
            raise Failure(f"the entitlement is not the web purchase's: {unlock}")
        say(f"granted: {unlock['identifier']} from {unlock['store']} ({unlock['transactionId']})")

        # A subscription, bought on the page.
        pay_on_page(browser, server.link(user, return_url, MONTHLY), return_url)
        premium = wait_until("the web subscription's entitlement", lambda: (
            e := server.entitlement(user, "premium")) and e.get("isActive") and e)
        if premium.get("store") != "stripe" or premium.get("willRenew") is not True:
            raise Failure(f"the subscription's entitlement is not a renewing web one: {premium}")
        say(f"subscribed: premium until {premium.get('expiresDate')} (renews: {premium.get('willRenew')})")
        # Selling it twice is refused.
        try:
            server.link(user, return_url, MONTHLY)
            raise Failure("a second checkout link for an active subscription was given")
        except urllib.error.HTTPError as error:
            if error.code != 409:
                raise Failure(f"a second subscription was refused with {error.code}, not 409")

        # Stripe bills the next period and is paid: the renewal is recorded as the entitlement's.
        customer_id = customer_of(stripe_url, user)
        renewal = stripe("POST", stripe_url, "/v1/invoices",
                         {"customer": customer_id, "subscription": premium["originalTransactionId"]})
        stripe("POST", stripe_url, f"/v1/invoices/{renewal['id']}/pay")
        period = wait_until("the renewal", lambda: next((
            t for t in server.customer(user).get("transactions", []) if t.get("transactionId") == renewal["id"]), None))
        renewed = server.entitlement(user, "premium")
        if period.get("originalTransactionId") != premium["originalTransactionId"] or not renewed.get("isActive"):
            raise Failure(f"the renewal is not a period of the subscription: {period}")
        say(f"renewed: period {renewal['id']} of {period['originalTransactionId']}")

        # The next renewal fails: a billing problem, and access kept in the grace period.
        fail_renewal(stripe_url, customer_id, premium["originalTransactionId"])
        troubled = wait_until("the billing problem", lambda: (
            e := server.entitlement(user, "premium")) and e.get("billingIssueDetectedAt") and e)
        if not troubled.get("isActive") or not troubled.get("gracePeriodExpiresAt"):
            raise Failure(f"a failed renewal did not keep access in a grace period: {troubled}")
        say(f"renewal failed: billing problem, grace period until {troubled['gracePeriodExpiresAt']}")

        # A refund (the emulator sends no charge.refunded: posted here as Stripe signs it).
        refund = stripe("POST", stripe_url, "/v1/refunds", {"payment_intent": intent["id"]})
        server.post_webhook("charge.refunded", refund["charge"], "charge")
        wait_until("the refund to take the entitlement back", lambda: not (
            server.entitlement(user, "unlock") or {}).get("isActive", True))
        say("refunded: the unlock entitlement is gone")

        # A webhook that never arrives: the reconciliation records the purchase.
        register_webhook(stripe_url, "http://127.0.0.1:9/nowhere")
        late = f"web-{uuid.uuid4().hex[:8]}"
        pay_on_page(browser, server.link(late, return_url), return_url)
        wait_until("the reconciliation to record a purchase no webhook brought", lambda: (
            server.entitlement(late, "unlock") or {}).get("isActive"))
        say("a purchase whose webhook never arrived was recorded by the reconciliation")

        # A declined card: the page shows the refusal and stays.
        declined = server.link(f"web-{uuid.uuid4().hex[:8]}", return_url)
        browser.go(declined["url"])
        type_card(browser, "4000000000000002")
        browser.find("#pay").click()
        browser.wait_for("the card's refusal", lambda: browser.find("#error").text.strip() != "")
        if browser.driver.current_url.startswith(return_url):
            raise Failure("a declined card went to the return URL")
        say(f"a declined card shows: {browser.find('#error').text!r}")
        browser.screenshot("checkout-declined")
        # A forged link: an error page.
        browser.go(link["url"].replace("appUserId=", "appUserId=x"))
        if "not valid" not in browser.find("h1").text:
            raise Failure(f"a forged link shows {browser.find('h1').text!r}")
    except Failure:
        browser.screenshot("checkout-failure")
        say("server log:\n" + open(server.log_path).read()[-3000:])
        raise
    finally:
        browser.quit()
        server.stop()
        returned.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--artifacts", required=True)
    arguments = parser.parse_args()
    try:
        run(arguments)
    except (Failure, urllib.error.URLError) as error:
        say(f"checkout FAILED: {error}")
        sys.exit(1)
    say("checkout passed")


if __name__ == "__main__":
    main()
