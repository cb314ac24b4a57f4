# Shared by the outage scripts (sourced): ports, waiting for a server, and the configuration of a
# `kakin server` over the data directory `kakin serve` made.

outage_free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Waits until the server on PORT answers /ready; fails with LOG when process PID ends first.
outage_wait_ready() { # PORT PID LOG
    for _ in $(seq 1 600); do
        curl -fs "http://127.0.0.1:$1/ready" >/dev/null 2>&1 && return 0
        kill -0 "$2" 2>/dev/null || { cat "$3" >&2; echo "$(basename "$0"): a server did not start" >&2; exit 1; }
        sleep 0.1
    done
    echo "$(basename "$0"): a server did not become ready" >&2
    exit 1
}

# The publishable key `kakin serve` made in DATA.
outage_publishable_key() { # DATA
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["publicKey"])' "$1/keys.json"
}

# Prints the JSON configuration of a `kakin server` configured as `kakin serve` configured its own
# (the keys, CA and App Store Server API key in DATA, the sandbox on SANDBOX_PORT), on DATABASE;
# listening on PORT when given (0: the configuration is for the operator's commands), posting
# webhooks to HOOK (URL=SECRET) when given.
outage_server_config() { # DATA DATABASE SANDBOX_PORT [PORT] [HOOK]
    python3 - "$1" "$2" "$3" "${4:-0}" "${5:-}" "$ROOT" <<'PY'
import json, sys
data, database, sandbox_port, port, hook, root = sys.argv[1:7]
keys = json.load(open(f"{data}/keys.json"))
sandbox = f"http://127.0.0.1:{sandbox_port}"
configuration = {
    "database": database,
    "serverKey": f"{data}/server-key.pem",
    "keys": {"publishable": keys["publicKey"], "secret": keys["secretKey"]},
    "jobs": {"reconcileIntervalSeconds": 0},
    # The load comes from one address: no per-address limits.
    "rateLimits": {"enabled": False},
    "apps": [{
        "bundleId": "com.example.kakin", "appAppleId": 6450000001, "environments": ["Sandbox"],
        "sharedSecret": keys["sharedSecret"],
        "appStoreServerAPI": {"keyId": keys["apiKeyID"], "issuerId": keys["apiIssuerID"], "privateKey": f"{data}/api-key.p8"},
        "catalog": f"{root}/Examples/Catalog/Kakin.storekit", "grants": f"{root}/Examples/Catalog/Kakin.grants.json",
        "extraRoots": [f"{data}/sandbox/ca/root.pem"],
        "endpoints": {"verifyReceiptProduction": f"{sandbox}/production/verifyReceipt",
                      "verifyReceiptSandbox": f"{sandbox}/verifyReceipt",
                      "serverAPIProduction": sandbox, "serverAPISandbox": sandbox},
    }],
}
if port != "0":
    configuration["listen"] = {"host": "127.0.0.1", "port": int(port)}
if hook:
    url, secret = hook.split("=", 1)
    configuration["webhooks"] = [{"url": url, "secret": secret}]
print(json.dumps(configuration))
PY
}
