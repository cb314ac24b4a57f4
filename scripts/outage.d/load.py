"""Posts purchases to the servers through an outage: a command that causes it, a command that ends it.

Arguments: URLS (comma-separated) KEY BODIES OUT FAIL RECOVER BEFORE DOWN AFTER WORKERS.
Each worker posts the next purchase of BODIES (one JSON body a line) to the servers in turn, one
request at a time. BEFORE seconds after the start the FAIL command runs (kill the database's
primary, fill its disk), DOWN seconds later the RECOVER command (promote the standby, free the
space), and the load goes on AFTER seconds more. Every request's outcome is kept; the transaction
IDs of the purchases the servers acknowledged (2xx) are written to OUT, one a line, and a summary is
printed as JSON (times in seconds from the start). An https URL is verified against the system's
roots, or the file SSL_CERT_FILE names (a test proxy's own CA).
"""
import base64
import http.client
import json
import subprocess
import sys
import threading
import time
import urllib.parse

urls, key, bodies_path, out_path, fail, recover = sys.argv[1:7]
before, down, after = (float(x) for x in sys.argv[7:10])
workers = int(sys.argv[10])
urls = urls.split(",")
bodies = [line.strip() for line in open(bodies_path) if line.strip()]


def transaction_id(body):
    payload = json.loads(body)["signedTransaction"].split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["transactionId"]


lock = threading.Lock()
next_body = [0]
outcomes = []  # (started, ended, status, retry_after, transaction ID, error)
start = time.monotonic()
stop_at = start + before + down + after


def take():
    with lock:
        if next_body[0] >= len(bodies):
            return None
        next_body[0] += 1
        return bodies[next_body[0] - 1]


def worker(number):
    connections = {}
    turn = number
    while time.monotonic() < stop_at:
        body = take()
        if body is None:
            break
        url = urllib.parse.urlsplit(urls[turn % len(urls)])
        turn += 1
        began = time.monotonic()
        status, retry_after, error = None, None, None
        try:
            connection = connections.get(url.netloc)
            if connection is None:
                if url.scheme == "https":
                    connection = http.client.HTTPSConnection(url.hostname, url.port, timeout=30)
                else:
                    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
                connections[url.netloc] = connection
            connection.request(
                "POST", "/v1/transactions", body=body,
                headers={"X-Kakin-Key": key, "Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            status, retry_after = response.status, response.getheader("Retry-After")
        except Exception as failure:  # an unanswered request: the test fails on it
            error = repr(failure)
            connections.pop(url.netloc, None)
        with lock:
            outcomes.append((began - start, time.monotonic() - start, status, retry_after, transaction_id(body), error))


threads = [threading.Thread(target=worker, args=(n,)) for n in range(workers)]
for thread in threads:
    thread.start()
time.sleep(before)
failed = time.monotonic() - start
subprocess.run(fail, shell=True, check=True)
time.sleep(down)
recovering = time.monotonic() - start
subprocess.run(recover, shell=True, check=True)
recovered = time.monotonic() - start
for thread in threads:
    thread.join()

acknowledged = [o for o in outcomes if o[2] is not None and 200 <= o[2] < 300]
with open(out_path, "w") as out:
    out.writelines(f"{o[4]}\n" for o in acknowledged)
refused = [o for o in outcomes if o[2] == 503]
unanswered = [o for o in outcomes if o[2] is None]
other = [o for o in outcomes if o[2] is not None and o[2] != 503 and not 200 <= o[2] < 300]
after_recovery = [o for o in acknowledged if o[0] >= recovered]
last_before = max((o[1] for o in acknowledged if o[1] <= failed), default=None)
summary = {
    "requests": len(outcomes),
    "acknowledged": len(acknowledged),
    "retryable_503": len(refused),
    "503_without_retry_after": sum(1 for o in refused if not o[3]),
    "unanswered": len(unanswered),
    "unanswered_examples": [o[5] for o in unanswered[:3]],
    "other_statuses": sorted({o[2] for o in other}),
    "other_count": len(other),
    "other_between": [round(min((o[0] for o in other), default=0), 2), round(max((o[1] for o in other), default=0), 2)],
    "failed_at": round(failed, 2),
    "recovery_started_at": round(recovering, 2),
    "recovered_at": round(recovered, 2),
    "last_acknowledged_before_failure": None if last_before is None else round(last_before, 2),
    "writes_resumed_after_recovery_s": round(min(o[1] for o in after_recovery) - recovered, 2) if after_recovery else None,
    "acknowledged_after_recovery": len(after_recovery),
    "acknowledged_while_down": sum(1 for o in acknowledged if o[0] >= failed and o[1] <= recovering),
    "503_between": [round(min((o[0] for o in refused), default=0), 2), round(max((o[1] for o in refused), default=0), 2)],
    "slowest_answer_s": round(max((o[1] - o[0] for o in outcomes), default=0), 2),
}
print(json.dumps(summary, indent=2))
