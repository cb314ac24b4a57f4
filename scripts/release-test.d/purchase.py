"""Buys one product in a sandbox App Store and delivers it to a Kakin server, as a device does.

Arguments: SERVER SANDBOX KEY BUNDLE USER PRODUCT [CUSTOMER_TOKEN]
Makes the sandbox tester USER (kept if it exists), buys PRODUCT as that tester through the device
API, posts the signed transaction to SERVER's POST /v1/transactions for the customer USER with the
publishable KEY (and the customer token, when the server requires one), then reads the customer back
with GET /v1/customers/USER. Prints the transaction ID and the customer's balances and entitlements
as JSON; exits 1, saying why, unless the server acknowledged the purchase and the customer holds it.
"""
import base64
import http.client
import json
import sys
import urllib.parse

server, sandbox, key, bundle, user, product = sys.argv[1:7]
token = sys.argv[7] if len(sys.argv) > 7 else None
server, sandbox = urllib.parse.urlsplit(server), urllib.parse.urlsplit(sandbox)


def fail(message):
    print(f"purchase.py: {message}", file=sys.stderr)
    sys.exit(1)


def call(url, method, path, body=None, headers=None):
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    connection.request(method, path, body=None if body is None else json.dumps(body),
                       headers={"Content-Type": "application/json", **(headers or {})})
    response = connection.getresponse()
    return response.status, response.read()


status, body = call(sandbox, "POST", "/v1/control/testers", {"id": user, "name": f"{user}@example.com"})
if status not in (200, 201, 409):
    fail(f"the sandbox did not make the tester: {status} {body[:300]!r}")
status, body = call(sandbox, "POST", "/v1/device/payments", {"testerID": user, "productID": product})
if status != 200:
    fail(f"the sandbox did not sell {product}: {status} {body[:300]!r}")
jws = json.loads(body)["transaction"]["jwsRepresentation"]
payload = jws.split(".")[1]
transaction = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["transactionId"]

headers = {"X-Kakin-Key": key}
if token:
    headers["X-Kakin-Customer-Token"] = token
status, body = call(server, "POST", "/v1/transactions",
                    {"bundleId": bundle, "appUserId": user, "signedTransaction": jws}, headers)
if not 200 <= status < 300:
    fail(f"the server did not acknowledge transaction {transaction}: {status} {body[:500]!r}")

path = f"/v1/customers/{urllib.parse.quote(user)}?" + urllib.parse.urlencode({"bundleId": bundle})
status, body = call(server, "GET", path, headers=headers)
if status != 200:
    fail(f"the server did not answer the customer: {status} {body[:500]!r}")
customer = json.loads(body)["customer"]
if transaction not in [t["transactionId"] for t in customer.get("transactions", [])]:
    fail(f"the customer's transactions do not hold {transaction}: {customer}")
print(json.dumps({"transactionId": transaction, "balances": customer.get("balances", {}),
                  "entitlements": [e.get("identifier") for e in customer.get("entitlements", [])]}))
