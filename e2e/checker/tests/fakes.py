"""Fakes of ringkv for the checker's tests: a node serving the public API and the node-to-node
protocol from an in-memory store, and a pod answering GET /v0/cluster."""

import http.server
import json
import os
import random
import shutil
import socketserver
import struct
import tempfile
import threading
import urllib.parse

from checker import wire

SECRET = b"the cluster secret"


def serve_in_background(server):
    """Serves until closed (shutdown, server_close), each request on a thread of its own."""
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    return server


class QuietHandler(http.server.BaseHTTPRequestHandler):
    """Keep-alive HTTP/1.1, no request log; answer() sends a whole answer."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b""):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def scratch_dir(test):
    """A temporary directory, removed after the test."""
    work = tempfile.mkdtemp()
    test.addCleanup(shutil.rmtree, work)
    return work


class FakeNode:
    """Stores {key: (tombstone, timestamp, value bytes)}; serves HTTP and the cluster protocol."""

    def __init__(self, name="http://fake-0:8080", secret=SECRET, overloaded_once=(), flaky=False):
        self.name, self.secret, self.proof_secret = name, secret, secret
        # flaky: of every 10 writes, one is applied and answered 504, one is not applied and
        # answered 504, and one is applied and its connection closed without an answer.
        self.flaky, self.writes = flaky, 0
        self.store, self.lock, self.clock = {}, threading.Lock(), 0
        self.overloaded_once = set(overloaded_once)
        self.peer = socketserver.ThreadingTCPServer(("127.0.0.1", 0), self._peer_handler())
        self.http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._http_handler())
        for server in (self.peer, self.http):
            serve_in_background(server)
        self.peer_port = self.peer.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.http.server_address[1]

    def close(self):
        for server in (self.peer, self.http):
            server.shutdown()
            server.server_close()

    def write(self, key, tombstone, value):
        with self.lock:
            self.clock += 1
            self.store[key] = (tombstone, self.clock, value)

    def share_store(self, other):
        self.store, self.lock = other.store, other.lock

    def _http_handler(node):
        class Handler(QuietHandler):
            wbufsize = 65536  # one write per answer (flushed after each request), not one per header

            def _key(self):
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                assert query["replicas"] == ["2/3"], query
                return query["id"][0].encode()

            def _write(self, tombstone, value, status):
                with node.lock:
                    node.writes += 1
                    fate = node.writes % 10 if node.flaky else 0
                if fate != 2:
                    node.write(self._key(), tombstone, value)
                if fate == 3:
                    self.close_connection = True
                    self.wfile.write(b"HTTP/1.1 2")  # cut off mid-answer
                    return
                self.answer(504 if fate in (1, 2) else status, b"Not Enough Replicas" if fate else b"")

            def do_PUT(self):
                self._write(False, self.rfile.read(int(self.headers["Content-Length"])), 201)

            def do_DELETE(self):
                self._write(True, b"", 202)

            def do_GET(self):
                found = node.store.get(self._key())
                if found is None or found[0]:
                    self.answer(404, b"Not Found")
                else:
                    self.answer(200, found[2])
        return Handler

    def _peer_handler(node):
        class Handler(socketserver.StreamRequestHandler):
            def handle(self):
                nonce = os.urandom(32)
                self.wfile.write(wire.encode_frame(wire.HELLO, 0, b"RKV1" + struct.pack(">H", 1) + nonce))
                kind, _, auth = wire.read_frame(self.rfile)
                assert kind == wire.AUTH
                client_nonce = auth[2:34]
                (length,) = struct.unpack(">H", auth[34:36])
                client_name = auth[36:36 + length]
                if auth[36 + length:] != wire.client_proof(node.secret, nonce, client_nonce, client_name):
                    self.wfile.write(wire.encode_frame(wire.REFUSED, 0, b"it does not know the cluster secret"))
                    return
                name = node.name.encode()
                self.wfile.write(wire.encode_frame(
                    wire.WELCOME, 0, struct.pack(">H", 1) + wire.server_proof(node.proof_secret, client_nonce, nonce, name)
                    + struct.pack(">H", len(name)) + name))
                write_lock = threading.Lock()

                def send(frame):
                    with write_lock:
                        self.wfile.write(frame)

                while True:
                    try:
                        kind, ident, payload = wire.read_frame(self.rfile)
                    except EOFError:
                        return
                    assert kind == wire.READ, kind
                    key = payload[2:2 + struct.unpack(">H", payload[:2])[0]]
                    if key in node.overloaded_once:
                        node.overloaded_once.discard(key)
                        answer = wire.encode_frame(wire.ERROR, ident, struct.pack(">H", 1) + b"too many requests")
                    elif key not in node.store:
                        answer = wire.encode_frame(wire.NOT_FOUND, ident)
                    else:
                        answer = wire.encode_frame(wire.RECORD, ident, wire.encode_record(wire.Copy(*node.store[key])))
                    # Answered in any order, as the node does: each after its own short delay.
                    threading.Timer(random.random() / 200, send, (answer,)).start()
        return Handler


def member(i):
    return "http://ringkv-%d.ringkv-headless.ns.svc.cluster.local:8080" % i


class FakeClusterView:
    """Answers GET /v0/cluster with the next of self.answers while there are any, then with
    self.members (a list of names); 503 for None."""

    def __init__(self, members):
        self.members, self.answers = members, []
        view = self

        class Handler(QuietHandler):
            def do_GET(self):
                assert self.path == "/v0/cluster", self.path
                members = view.answers.pop(0) if view.answers else view.members
                status, body = (503, b"") if members is None else (200, json.dumps({
                    "self": member(0), "clusterPort": 7070, "version": 3, "known": True,
                    "members": [{"name": name, "address": "10.0.0.1", "state": "UP", "dataState": "NORMAL"}
                                for name in members]}).encode())
                self.answer(status, body)

        self.server = serve_in_background(http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler))
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]

    def close(self):
        self.server.shutdown()
        self.server.server_close()
