"""Signs in to a Kakin server's dashboard and opens a customer's page, as an operator does.

Arguments: SERVER KEY BUNDLE USER TRANSACTION
GET /dashboard/login (the form and its CSRF cookie), POST it with KEY (an app's secret key or the
operator key), then GET /dashboard/customer?app=BUNDLE&user=USER with the session cookie. Exits 1,
saying why, unless each answers as it should and the customer's page shows TRANSACTION. Cookies are
sent back whatever their Secure attribute says: the test talks plain HTTP on loopback.
"""
import http.client
import sys
import urllib.parse

server, key, bundle, user, transaction = sys.argv[1:6]
server = urllib.parse.urlsplit(server)


def fail(message):
    print(f"dashboard.py: {message}", file=sys.stderr)
    sys.exit(1)


def call(method, path, body=None, cookies=None):
    connection = http.client.HTTPConnection(server.hostname, server.port, timeout=30)
    headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in (cookies or {}).items())} if cookies else {}
    if body is not None:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    set = {}
    for name, value in response.getheaders():
        if name.lower() == "set-cookie":
            pair = value.split(";", 1)[0]
            set[pair.split("=", 1)[0]] = pair.split("=", 1)[1]
    return response.status, response.getheader("Location"), response.read().decode(errors="replace"), set


status, location, _, _ = call("GET", "/dashboard/")
if status not in (200, 301, 302, 303, 307, 308):
    fail(f"GET /dashboard/ answered {status}")
status, _, page, cookies = call("GET", "/dashboard/login")
if status != 200 or "<form" not in page:
    fail(f"GET /dashboard/login answered {status} without the sign-in form")
csrf = cookies.get("kakin_login")
if not csrf:
    fail("the sign-in page set no kakin_login cookie")
form = urllib.parse.urlencode({"csrf": csrf, "password": key})
status, location, page, session = call("POST", "/dashboard/login", form, cookies)
if status not in (302, 303) or not session.get("kakin_session"):
    fail(f"signing in answered {status} ({location}) without a session: {page[:300]!r}")
session = {k: v for k, v in session.items() if v}
path = "/dashboard/customer?" + urllib.parse.urlencode({"app": bundle, "user": user})
status, _, page, _ = call("GET", path, cookies=session)
if status != 200:
    fail(f"GET {path} answered {status}")
if transaction not in page:
    fail(f"the customer's page does not show transaction {transaction}")
print(f"the dashboard signed in and shows {user}'s transaction {transaction}")
