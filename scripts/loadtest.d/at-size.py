#!/usr/bin/env python3
"""Measurements of scripts/loadtest beyond wrk's: the dashboard's pages and the customer answer,
the server's memory around them, App Store notifications made in the sandbox, and one
reconciliation run followed to its end. Each subcommand prints one JSON object.

  at-size.py pages URL SECRET PUBLISHABLE PIDS [ROUNDS]
  at-size.py notifications SANDBOX_URL COUNT
  at-size.py reconcile URL SECRET PIDS
  at-size.py retention SANDBOX_URL URL PUBLISHABLE KAKIN DATA SANDBOX_PORT MESSAGE PIDS
"""
import http.client
import json
import os
import re
import statistics
import subprocess
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


def cpu_seconds(pids):
    """The CPU time the processes used so far, user and system, added up, in seconds."""
    ticks = 0
    for pid in pids.split():
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
                ticks += int(fields[11]) + int(fields[12])
        except FileNotFoundError:
            pass
    return ticks / os.sysconf("SC_CLK_TCK")


def route_times(url, route):
    """The server's own latency histogram of `route`'s 200 answers: the count, the sum in seconds
    and the cumulative count under each bucket's upper bound."""
    status, body = Client(url).request("GET", "/metrics")
    if status != 200:
        sys.exit(f"at-size.py: /metrics answered {status}")
    count, total, buckets = 0, 0.0, {}
    label = f'route="{route}",method="POST",status="200"'
    for line in body.decode().splitlines():
        if label not in line:
            continue
        name, value = line.rsplit(" ", 1)
        if name.startswith("kakin_http_request_duration_seconds_count"):
            count = int(float(value))
        elif name.startswith("kakin_http_request_duration_seconds_sum"):
            total = float(value)
        elif name.startswith("kakin_http_request_duration_seconds_bucket"):
            bound = re.search(r'le="([^"]+)"', name).group(1)
            buckets[float("inf") if bound == "+Inf" else float(bound)] = int(float(value))
    return count, total, buckets


def retention(sandbox_url, url, publishable, kakin, data, sandbox_port, message, pids):
    """Retention Messaging at size: a subscription bought in the sandbox and posted to the server,
    the message its rule names uploaded, the cancel page opened once (the server's choice must be
    shown), then the sandbox's performance test against the server's endpoint, followed to its end.
    `kakin serve` answers and plays Apple in one process: its CPU per request covers both sides."""
    sandbox = Client(sandbox_url)
    json_headers = {"Content-Type": "application/json"}
    tester = "retention-load"
    status, body = sandbox.request(
        "POST", "/v1/control/testers", body=json.dumps({"id": tester, "name": "retention@example.com"}),
        headers=json_headers)
    if status >= 300 and status != 409:
        sys.exit(f"at-size.py: the sandbox did not make a tester ({status}): {body[:300]!r}")
    status, body = sandbox.request(
        "POST", "/v1/device/payments",
        body=json.dumps({"testerID": tester, "productID": f"{BUNDLE_ID}.premium.monthly"}), headers=json_headers)
    if status != 200:
        sys.exit(f"at-size.py: the subscription was not bought ({status}): {body[:300]!r}")
    transaction = json.loads(body)["transaction"]
    original = transaction["transaction"]["originalTransactionId"]
    status, body = Client(url).request(
        "POST", "/v1/transactions",
        body=json.dumps({"bundleId": BUNDLE_ID, "appUserId": "retention-subscriber",
                         "signedTransaction": transaction["jwsRepresentation"]}),
        headers={**json_headers, "X-Kakin-Key": publishable})
    if status != 200:
        sys.exit(f"at-size.py: the server refused the subscription ({status}): {body[:300]!r}")

    def cli(*arguments):
        done = subprocess.run(
            [kakin, "retention", *arguments, "--data", data, "--sandbox-port", sandbox_port],
            capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"at-size.py: kakin retention {' '.join(arguments)}: {done.stderr.strip()}")
        return done.stdout

    cli("messages", "upload", "--id", message, "--header", "Before you go", "--body", "Three months at half price.")
    status, body = sandbox.request(
        "POST", "/v1/control/retention/cancel-page",
        body=json.dumps({"originalTransactionId": original, "locale": "en-US"}), headers=json_headers)
    page = json.loads(body) if status == 200 else {}
    if page.get("shownMessageIdentifier") != message:
        sys.exit(f"at-size.py: the cancel page did not show the server's choice ({status}): {body[:500]!r}")
    route = "/v1/retention/apple"
    before = cpu_seconds(pids)
    count_before, sum_before, buckets_before = route_times(url, route)
    start = time.perf_counter()
    result = json.loads(cli("performance-test", "start", original, "--wait", "--json"))
    seconds = time.perf_counter() - start
    used = cpu_seconds(pids) - before
    count_after, sum_after, buckets_after = route_times(url, route)
    requests = (result.get("config") or {}).get("totalRequests") or 1
    answered = max(count_after - count_before, 1)
    # The server's own p99: the smallest bucket bound under which 99 % of the test's answers fell.
    p99_bound = next((bound for bound in sorted(buckets_after)
                      if buckets_after[bound] - buckets_before.get(bound, 0) >= 0.99 * answered), None)
    return {"originalTransactionId": original, "cancelPageMs": page.get("elapsedMilliseconds"),
            "seconds": seconds, "cpuPerRequestUs": used * 1e6 / requests, "result": result,
            "serverAnswered": count_after - count_before,
            "serverMeanMs": (sum_after - sum_before) * 1000 / answered,
            "serverP99AtMostMs": None if p99_bound in (None, float("inf")) else p99_bound * 1000}


if __name__ == "__main__":
    command, arguments = sys.argv[1], sys.argv[2:]
    action = {"pages": pages, "notifications": notifications, "reconcile": reconcile,
              "metrics": metrics_caught_up, "retention": retention}[command]
    print(json.dumps(action(*arguments)))
