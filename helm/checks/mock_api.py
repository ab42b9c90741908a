"""A tiny stand-in for the ringkv API, for running the chart's helm test script (helm/verify.sh):
PUT stores, GET answers what was stored (reversed in mode "corrupt", which the script must catch),
DELETE forgets; each version has an ETag, and If-Match / If-None-Match: * are honoured (412 when
they do not hold; mode "unconditional" ignores them, which the script must catch); every /v0/entity request needs `Authorization: Bearer mock-token` (else 401). In mode
"stranger" it is some other server, which answers 404 to everything (the chart's wait for the release
must not take it for ringkv).
mock_api.py MODE PORT_FILE listens on a free port and writes it to PORT_FILE."""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

mode, port_file = sys.argv[1], sys.argv[2]
store = {}
tags = {}
versions = [0]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def key(self):
        return parse_qs(urlparse(self.path).query).get("id", [None])[0]

    def send(self, code, body=b"", tag=None):
        self.send_response(code)
        if tag:
            self.send_header("ETag", tag)
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
            return self.send(200, body[::-1] if mode == "corrupt" else body, tags[self.key()])
        self.send(404)

    def condition_fails(self):
        if mode == "unconditional":
            return False
        current = tags.get(self.key())
        if_match, if_none_match = self.headers.get("If-Match"), self.headers.get("If-None-Match")
        if if_match is not None and (current is None or if_match not in ("*", current)):
            return True
        return if_none_match == "*" and current is not None

    def do_PUT(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if not self.authorized():
            return
        if self.condition_fails():
            return self.send(412, b"the condition did not hold", tags.get(self.key()))
        versions[0] += 1
        store[self.key()] = body
        tags[self.key()] = '"%x-0"' % versions[0]
        self.send(201, tag=tags[self.key()])

    def do_DELETE(self):
        if not self.authorized():
            return
        if self.condition_fails():
            return self.send(412, b"the condition did not hold", tags.get(self.key()))
        store.pop(self.key(), None)
        tags.pop(self.key(), None)
        self.send(202)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file, "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
