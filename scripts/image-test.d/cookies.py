"""Signs in to the dashboard through a URL and says whether its cookies came back Secure.

Arguments: URL KEY [CA]
GET URL/dashboard/login (the form and its CSRF cookie kakin_login), POST it with KEY (the operator
key), then GET URL/dashboard/ with the session cookie kakin_session. An https URL is verified
against CA (a PEM file) when given. Prints one JSON object: each cookie's Set-Cookie attributes and
whether it is Secure, the sign-in's status and whether the session opened the dashboard. Exits 1,
saying why, when signing in does not work at all.
"""
import http.client
import json
import ssl
import sys
import urllib.parse

url, key = sys.argv[1], sys.argv[2]
ca = sys.argv[3] if len(sys.argv) > 3 else None
url = urllib.parse.urlsplit(url)


def fail(message):
    print(f"cookies.py: {message}", file=sys.stderr)
    sys.exit(1)


def call(method, path, body=None, cookies=None):
    if url.scheme == "https":
        context = ssl.create_default_context(cafile=ca)
        connection = http.client.HTTPSConnection(url.hostname, url.port, timeout=30, context=context)
    else:
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    headers = {}
    if cookies:
        headers["Cookie"] = "; ".join(f"{name}={value}" for name, value in cookies.items())
    if body is not None:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    page = response.read().decode(errors="replace")
    set_cookies = {}
    for name, value in response.getheaders():
        if name.lower() == "set-cookie":
            pair, _, attributes = value.partition(";")
            cookie, _, cookie_value = pair.partition("=")
            flags = [a.strip() for a in attributes.split(";") if a.strip()]
            set_cookies[cookie.strip()] = {
                "value": cookie_value,
                "secure": any(flag.lower() == "secure" for flag in flags),
                "attributes": flags,
            }
    return response.status, page, set_cookies


status, page, login = call("GET", "/dashboard/login")
if status != 200 or "<form" not in page or "kakin_login" not in login:
    fail(f"GET /dashboard/login answered {status} without the sign-in form and its kakin_login cookie")
form = urllib.parse.urlencode({"csrf": login["kakin_login"]["value"], "password": key})
status, page, signed_in = call("POST", "/dashboard/login", form, {"kakin_login": login["kakin_login"]["value"]})
session = signed_in.get("kakin_session")
if status not in (302, 303) or not session or not session["value"]:
    fail(f"signing in answered {status} without a session: {page[:300]!r}")
opened, page, _ = call("GET", "/dashboard/", cookies={"kakin_session": session["value"]})
print(json.dumps({
    "login_cookie": {"secure": login["kakin_login"]["secure"], "attributes": login["kakin_login"]["attributes"]},
    "session_cookie": {"secure": session["secure"], "attributes": session["attributes"]},
    "sign_in_status": status,
    "dashboard_status": opened,
}))
