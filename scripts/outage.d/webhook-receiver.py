"""A webhook endpoint for the outage tests: answers 200 to every post and appends the event's ID
(the body's "id") to OUT, one a line. Arguments: PORT OUT."""
import http.server
import json
import sys
import threading

port, out_path = int(sys.argv[1]), sys.argv[2]
lock = threading.Lock()
out = open(out_path, "a", buffering=1)


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            event = json.loads(body)["id"]
        except Exception:
            event = None
        with lock:
            if event is not None:
                out.write(f"{event}\n")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", port), Receiver).serve_forever()
