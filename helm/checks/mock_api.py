"""A tiny stand-in for the ringkv API, for running the chart's helm test script (helm/verify.sh):
PUT stores, GET answers what was stored (reversed in mode "corrupt", which the script must catch),
DELETE forgets; every /v0/entity request needs `Authorization: Bearer mock-token` (else 401). In mode
"stranger" it is some other server, which answers 404 to everything (the chart's wait for the release
must not take it for ringkv).
mock_api.py MODE PORT_FILE listens on a free port and writes it to PORT_FILE."""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

mode, port_file = sys.argv[1], sys.argv[2]
store = {}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def key(self):
        return parse_qs(urlparse(self.path).query).get("id", [None])[0]

    def send(self, code, body=b""):
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def authorized(self):
        if self.headers.get("Authorization") == "Bearer mock-token":
            return True
        self.send(401)
        return False

    def do_GET(self):
        path = urlparse(self.path).path
        if mode == "stranger":
            return self.send(404)
        if path == "/v0/status":
            return self.send(200, b"OK")
        if not self.authorized():
            return None
        if path == "/v0/entity" and self.key() in store:
            body = store[self.key()]
            return self.send(200, body[::-1] if mode == "corrupt" else body)
        self.send(404)

    def do_PUT(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if not self.authorized():
            return
        store[self.key()] = body
        self.send(201)

    def do_DELETE(self):
        if not self.authorized():
            return
        store.pop(self.key(), None)
        self.send(202)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file, "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
