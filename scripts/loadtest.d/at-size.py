#!/usr/bin/env python3
"""Measurements of scripts/loadtest beyond wrk's: the dashboard's pages and the customer answer,
the server's memory around them, App Store notifications made in the sandbox, and one
reconciliation run followed to its end. Each subcommand prints one JSON object.

  at-size.py pages URL SECRET PUBLISHABLE PIDS [ROUNDS]
  at-size.py notifications SANDBOX_URL COUNT
  at-size.py reconcile URL SECRET PIDS
"""
import http.client
import json
import re
import statistics
import sys
import time
import urllib.parse

BUNDLE_ID = "com.example.kakin"


def rss_mb(pids):
    """The resident memory of the processes, added up, in MB."""
    total = 0
    for pid in pids.split():
        try:
            with open(f"/proc/{pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except FileNotFoundError:
            pass
    return total / 1024


class Client:
    """One keep-alive connection to a server, with the cookies it sets."""

    def __init__(self, url):
        parsed = urllib.parse.urlsplit(url)
        self.connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=300)
        self.cookies = {}

    def request(self, method, path, body=None, headers=None):
        headers = dict(headers or {})
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        data = response.read()
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                self.cookies[name] = rest.split(";", 1)[0]
        return response.status, data

    def timed(self, method, path, headers=None):
        start = time.perf_counter()
        status, body = self.request(method, path, headers=headers)
        elapsed = (time.perf_counter() - start) * 1000
        if status != 200:
            sys.exit(f"at-size.py: {path} answered {status}: {body[:300]!r}")
        return elapsed


def pages(url, secret, publishable, pids, rounds=5):
    client = Client(url)
    status, form = client.request("GET", "/dashboard/login")
    csrf = re.search(rb'name="csrf" value="([^"]+)"', form)
    if status != 200 or not csrf:
        sys.exit(f"at-size.py: the sign-in form did not come ({status})")
    body = urllib.parse.urlencode({"csrf": csrf.group(1).decode(), "password": secret})
    status, _ = client.request(
        "POST", "/dashboard/login", body=body, headers={"Content-Type": "application/x-www-form-urlencoded"})
    if status != 303 and status != 302:
        sys.exit(f"at-size.py: signing in to the dashboard answered {status}")
    user = "load-1"
    targets = {
        "overview": ("/dashboard", {}),
        "customers": ("/dashboard/customers", {}),
        "customer search": ("/dashboard/customers?q=load-12", {}),
        "customer page": (f"/dashboard/customer?app={BUNDLE_ID}&user={user}", {}),
        "activity": ("/dashboard/activity", {}),
        "customer answer": (f"/v1/customers/{user}?bundleId={BUNDLE_ID}", {"X-Kakin-Key": publishable}),
        "overview, a year by month": ("/dashboard?range=365&granularity=month", {}),
    }
    # Each subscription metric over the default 30 days, and over a year by month.
    auth = {"Authorization": f"Bearer {secret}"}
    for metric in ("mrr", "active_subscriptions", "active_trials", "family_shares", "new_customers",
                   "trial_conversion", "churn", "revenue", "proceeds", "refunds", "ltv", "retention"):
        targets[f"metric {metric}"] = (f"/v1/metrics/{metric}?bundleId={BUNDLE_ID}", auth)
        targets[f"metric {metric}, a year by month"] = (
            f"/v1/metrics/{metric}?bundleId={BUNDLE_ID}&from={year_ago()}&granularity=month", auth)
    # The subscription metrics are read as the job leaves them: once it has caught up.
    caught_up = metrics_caught_up(url)["seconds"]
    before = rss_mb(pids)
    result = {"rssBeforeMB": before, "pages": {}, "metricsCaughtUpSeconds": caught_up}
    for name, (path, headers) in targets.items():
        times = [client.timed("GET", path, headers) for _ in range(int(rounds))]
        result["pages"][name] = {"medianMs": statistics.median(times), "maxMs": max(times)}
    result["rssAfterMB"] = rss_mb(pids)
    return result


def year_ago():
    return time.strftime("%Y-%m-%d", time.gmtime(time.time() - 364 * 86400))


def metrics_caught_up(url, limit=3600):
    """Waits until the server's metrics job has caught up with every purchase (its gauge is 1)."""
    client = Client(url)
    start = time.perf_counter()
    while time.perf_counter() - start < limit:
        status, body = client.request("GET", "/metrics")
        if status == 200 and re.search(rb"^kakin_metrics_caught_up 1(\.0)?$", body, re.M):
            return {"seconds": time.perf_counter() - start}
        time.sleep(1)
    sys.exit(f"at-size.py: the metrics had not caught up after {limit} s")


def notifications(sandbox_url, count):
    """Makes `count` purchases in the sandbox: each sends the server a notification."""
    client = Client(sandbox_url)
    tester = "reconcile-load"
    status, body = client.request(
        "POST", "/v1/control/testers",
        body=json.dumps({"id": tester, "name": "reconcile@example.com", "storefront": "USA"}),
        headers={"Content-Type": "application/json"})
    if status >= 300 and status != 409:
        sys.exit(f"at-size.py: the sandbox did not make a tester ({status}): {body[:300]!r}")
    start = time.perf_counter()
    payment = json.dumps({"testerID": tester, "productID": f"{BUNDLE_ID}.increasePoints"})
    for _ in range(int(count)):
        status, body = client.request(
            "POST", "/v1/device/payments", body=payment, headers={"Content-Type": "application/json"})
        if status != 200:
            sys.exit(f"at-size.py: a sandbox payment answered {status}: {body[:300]!r}")
    return {"notifications": int(count), "seconds": time.perf_counter() - start}


def reconcile(url, secret, pids):
    client = Client(url)
    auth = {"Authorization": f"Bearer {secret}"}
    idle = rss_mb(pids)
    start = time.perf_counter()
    status, body = client.request("POST", f"/v1/admin/reconcile?bundleId={BUNDLE_ID}", headers=auth)
    if status != 202:
        sys.exit(f"at-size.py: reconcile answered {status}: {body[:300]!r}")
    run = json.loads(body)
    peak = idle
    # A run still going after ten minutes is reported as it is.
    while run.get("state") == "running" and time.perf_counter() - start < 600:
        time.sleep(0.2)
        peak = max(peak, rss_mb(pids))
        status, body = client.request("GET", f"/v1/admin/reconcile/runs/{run['id']}", headers=auth)
        if status != 200:
            sys.exit(f"at-size.py: the run answered {status}: {body[:300]!r}")
        run = json.loads(body)
    return {"seconds": time.perf_counter() - start, "rssIdleMB": idle, "rssPeakMB": peak, "run": run}


if __name__ == "__main__":
    command, arguments = sys.argv[1], sys.argv[2:]
    action = {"pages": pages, "notifications": notifications, "reconcile": reconcile,
              "metrics": metrics_caught_up}[command]
    print(json.dumps(action(*arguments)))
