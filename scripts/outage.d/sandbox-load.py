"""Buys in the sandbox App Store and posts each purchase to the server, as devices do.

Arguments: SERVER SANDBOX KEY OUT SECONDS WORKERS TESTERS.
Each worker buys points as one of TESTERS sandbox testers (made first), posts the signed transaction
to SERVER's POST /v1/transactions as that tester's customer, and writes the transaction ID and the
request body of every purchase the server acknowledged (2xx) to OUT, one JSON object a line. Stops
after SECONDS; prints a summary as JSON.
"""
import base64
import http.client
import json
import sys
import threading
import time
import urllib.parse

server, sandbox, key, out_path = sys.argv[1:5]
seconds, workers, testers = float(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
server, sandbox = urllib.parse.urlsplit(server), urllib.parse.urlsplit(sandbox)


def post(connection, path, body, headers=None):
    connection.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json", **(headers or {})})
    response = connection.getresponse()
    return response.status, response.read()


setup = http.client.HTTPConnection(sandbox.hostname, sandbox.port, timeout=30)
for number in range(testers):
    post(setup, "/v1/control/testers", {"id": f"restore-{number}", "name": f"restore-{number}@example.com"})

lock = threading.Lock()
acknowledged, refused, failed = [], [], []
stop_at = time.monotonic() + seconds


def worker(number):
    store = http.client.HTTPConnection(sandbox.hostname, sandbox.port, timeout=30)
    api = http.client.HTTPConnection(server.hostname, server.port, timeout=30)
    turn = number
    while time.monotonic() < stop_at:
        tester = f"restore-{turn % testers}"
        turn += workers
        status, body = post(store, "/v1/device/payments", {"testerID": tester, "productID": "com.example.kakin.increasePoints"})
        if status != 200:
            with lock:
                failed.append(f"sandbox {status}: {body[:200]!r}")
            continue
        jws = json.loads(body)["transaction"]["jwsRepresentation"]
        payload = jws.split(".")[1]
        transaction = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["transactionId"]
        upload = {"bundleId": "com.example.kakin", "appUserId": f"customer-{tester}", "signedTransaction": jws}
        try:
            status, body = post(api, "/v1/transactions", upload, {"X-Kakin-Key": key})
        except Exception as failure:
            with lock:
                failed.append(repr(failure))
            api = http.client.HTTPConnection(server.hostname, server.port, timeout=30)
            continue
        with lock:
            if 200 <= status < 300:
                acknowledged.append({"transactionId": transaction, "body": upload})
            else:
                refused.append(status)


threads = [threading.Thread(target=worker, args=(n,)) for n in range(workers)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
with open(out_path, "w") as out:
    out.writelines(json.dumps(a) + "\n" for a in acknowledged)
print(json.dumps({"acknowledged": len(acknowledged), "refused": refused[:10], "failed": failed[:5]}, indent=2))
sys.exit(1 if failed or refused else 0)
