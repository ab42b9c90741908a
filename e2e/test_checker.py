"""Tests of e2e/checker.py without a cluster: its classification and census counting, the
node-to-node protocol against a fake node, and load + check + census against a fake ringkv.

    python3 -m unittest discover -s e2e
"""

import contextlib
import http.server
import io
import json
import os
import shutil
import random
import socketserver
import struct
import sys
import tempfile
import threading
import time
import unittest
import unittest.mock
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checker  # noqa: E402
from checker import LOST, OK, STALE, Copy  # noqa: E402

SECRET = b"the cluster secret"


def put(value):
    return {"op": "put", "value": value}


DELETE = {"op": "delete"}


def entry(acked=None, *later):
    e = checker.new_entry()
    if acked is not None:
        checker.note_acked(e, acked)
    for op in later:
        checker.note_unacked(e, op, "504")
    return e


def value_copy(value, timestamp=1):
    return Copy(False, timestamp, value.encode())


TOMBSTONE = Copy(True, 2, b"")


class ClassifyTest(unittest.TestCase):

    def test_the_last_acknowledged_value_is_ok(self):
        self.assertEqual(OK, checker.classify(entry(put("v2")), 200, b"v2"))

    def test_an_acknowledged_delete_reads_404(self):
        self.assertEqual(OK, checker.classify(entry(DELETE), 404, b"Not Found"))

    def test_a_key_never_acknowledged_reads_404(self):
        self.assertEqual(OK, checker.classify(entry(), 404, b""))

    def test_an_acknowledged_value_missing_is_lost(self):
        self.assertEqual(LOST, checker.classify(entry(put("v2")), 404, b""))

    def test_an_older_value_is_lost(self):
        e = entry(put("v1"))
        checker.note_acked(e, put("v2"))
        self.assertEqual(LOST, checker.classify(e, 200, b"v1"))

    def test_a_value_after_an_acknowledged_delete_is_lost(self):
        e = entry(put("v1"))
        checker.note_acked(e, DELETE)
        self.assertEqual(LOST, checker.classify(e, 200, b"v1"))

    def test_a_value_never_written_is_lost(self):
        self.assertEqual(LOST, checker.classify(entry(put("v1")), 200, b"something else"))

    def test_a_later_unacknowledged_write_is_accepted(self):
        e = entry(put("v1"), put("v2"), put("v3"))
        self.assertEqual(STALE, checker.classify(e, 200, b"v2"))
        self.assertEqual(STALE, checker.classify(e, 200, b"v3"))
        self.assertEqual(OK, checker.classify(e, 200, b"v1"))

    def test_a_later_unacknowledged_delete_accepts_404(self):
        e = entry(put("v1"), DELETE)
        self.assertEqual(STALE, checker.classify(e, 404, b""))
        self.assertEqual(OK, checker.classify(e, 200, b"v1"))

    def test_an_unacknowledged_write_before_the_last_acknowledgement_is_not_accepted(self):
        e = entry(put("v1"), put("v2"))
        checker.note_acked(e, put("v3"))
        self.assertEqual([], e["later"])
        self.assertEqual(LOST, checker.classify(e, 200, b"v2"))
        self.assertEqual(OK, checker.classify(e, 200, b"v3"))

    def test_an_unacknowledged_write_of_a_key_never_acknowledged(self):
        e = entry(None, put("v1"))
        self.assertEqual(OK, checker.classify(e, 404, b""))
        self.assertEqual(STALE, checker.classify(e, 200, b"v1"))

    def test_a_5xx_is_an_error(self):
        self.assertEqual(checker.ERROR_CLASS, checker.classify(entry(put("v1")), 504, b"Not Enough Replicas"))

    def test_the_record_survives_json(self):
        e = entry(put("v1"), DELETE, put("v2"))
        again = json.loads(json.dumps(e))
        self.assertEqual(STALE, checker.classify(again, 200, b"v2"))
        self.assertEqual(STALE, checker.classify(again, 404, b""))


class CensusTest(unittest.TestCase):

    def test_holds(self):
        self.assertTrue(checker.holds(entry(put("v1")), value_copy("v1")))
        self.assertFalse(checker.holds(entry(put("v1")), None))
        self.assertFalse(checker.holds(entry(put("v1")), TOMBSTONE))
        self.assertFalse(checker.holds(entry(put("v2")), value_copy("v1")))
        self.assertTrue(checker.holds(entry(DELETE), TOMBSTONE))
        self.assertTrue(checker.holds(entry(DELETE), None))
        self.assertFalse(checker.holds(entry(DELETE), value_copy("v1")))
        self.assertTrue(checker.holds(entry(put("v1"), put("v2")), value_copy("v2")))
        self.assertTrue(checker.holds(entry(put("v1"), DELETE), TOMBSTONE))

    def test_the_threshold_is_the_replication_factor(self):
        self.assertEqual(3, checker.replication_factor(5))
        self.assertEqual(3, checker.replication_factor(3))
        self.assertEqual(2, checker.replication_factor(2))
        entries = {"a": entry(put("a1")), "b": entry(put("b1")), "c": entry(DELETE), "d": entry(put("d1"))}
        copies = {
            "p0": {"a": value_copy("a1"), "b": value_copy("b1"), "c": TOMBSTONE, "d": value_copy("d0")},
            "p1": {"a": value_copy("a1"), "b": value_copy("b1"), "c": None, "d": value_copy("d1")},
            "p2": {"a": value_copy("a1"), "b": None, "c": value_copy("c0"), "d": value_copy("d1")},
            "p3": {"a": value_copy("a1"), "b": None, "c": None, "d": None},
            "p4": {"a": value_copy("a1"), "b": value_copy("b0"), "c": None},  # p4 did not answer for d
        }
        counts = checker.census_count(entries, copies)
        # a: more copies than RF (old owners keep theirs after a scale-up) is fine.
        self.assertEqual({"a": 5, "b": 2, "c": 4, "d": 2}, counts)
        self.assertEqual(["b", "d"], checker.under_replicated(counts, 3))
        self.assertEqual([], checker.under_replicated(counts, 2))

    def test_on_three_pods_every_pod_must_hold_every_key(self):
        entries = {"a": entry(put("a1"))}
        copies = {"p0": {"a": value_copy("a1")}, "p1": {"a": value_copy("a1")}, "p2": {"a": None}}
        counts = checker.census_count(entries, copies)
        self.assertEqual(["a"], checker.under_replicated(counts, checker.replication_factor(len(copies))))


# ---- a fake node: the peer protocol and the public API, in memory ------------------------------------

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
            server.daemon_threads = True
            threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
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
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            wbufsize = 65536  # one write per answer (flushed after each request), not one per header

            def log_message(self, *args):
                pass

            def _key(self):
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                assert query["replicas"] == ["2/3"], query
                return query["id"][0].encode()

            def _answer(self, status, body=b""):
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

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
                self._answer(504 if fate in (1, 2) else status, b"Not Enough Replicas" if fate else b"")

            def do_PUT(self):
                self._write(False, self.rfile.read(int(self.headers["Content-Length"])), 201)

            def do_DELETE(self):
                self._write(True, b"", 202)

            def do_GET(self):
                found = node.store.get(self._key())
                if found is None or found[0]:
                    self._answer(404, b"Not Found")
                else:
                    self._answer(200, found[2])
        return Handler

    def _peer_handler(node):
        class Handler(socketserver.StreamRequestHandler):
            def handle(self):
                nonce = os.urandom(32)
                self.wfile.write(checker.encode_frame(checker.HELLO, 0, b"RKV1" + struct.pack(">H", 1) + nonce))
                kind, _, auth = checker.read_frame(self.rfile)
                assert kind == checker.AUTH
                client_nonce = auth[2:34]
                (length,) = struct.unpack(">H", auth[34:36])
                client_name = auth[36:36 + length]
                if auth[36 + length:] != checker.client_proof(node.secret, nonce, client_nonce, client_name):
                    self.wfile.write(checker.encode_frame(checker.REFUSED, 0, b"it does not know the cluster secret"))
                    return
                name = node.name.encode()
                self.wfile.write(checker.encode_frame(
                    checker.WELCOME, 0, struct.pack(">H", 1) + checker.server_proof(node.proof_secret, client_nonce, nonce, name)
                    + struct.pack(">H", len(name)) + name))
                write_lock = threading.Lock()

                def send(frame):
                    with write_lock:
                        self.wfile.write(frame)

                while True:
                    try:
                        kind, ident, payload = checker.read_frame(self.rfile)
                    except EOFError:
                        return
                    assert kind == checker.READ, kind
                    key = payload[2:2 + struct.unpack(">H", payload[:2])[0]]
                    if key in node.overloaded_once:
                        node.overloaded_once.discard(key)
                        answer = checker.encode_frame(checker.ERROR, ident, struct.pack(">H", 1) + b"too many requests")
                    elif key not in node.store:
                        answer = checker.encode_frame(checker.NOT_FOUND, ident)
                    else:
                        tombstone, timestamp, value = node.store[key]
                        answer = checker.encode_frame(checker.RECORD, ident,
                                                      bytes([1, 1 if tombstone else 0]) + struct.pack(">q", timestamp) + value)
                    # Answered in any order, as the node does: each after its own short delay.
                    threading.Timer(random.random() / 200, send, (answer,)).start()
        return Handler


class ProtocolTest(unittest.TestCase):

    def setUp(self):
        self.node = FakeNode(overloaded_once={b"k2"})
        self.addCleanup(self.node.close)
        self.node.write(b"k1", False, b"one")
        self.node.write(b"k2", False, b"two")
        self.node.write(b"k3", True, b"")

    def test_handshake_and_pipelined_reads(self):
        connection = checker.PeerConnection("127.0.0.1", self.node.peer_port, SECRET, wait=2)
        self.addCleanup(connection.close)
        self.assertEqual("http://fake-0:8080", connection.server_name)
        copies = connection.read_many(["k1", "k2", "k3", "k4"] + ["x%d" % i for i in range(200)], window=7)
        self.assertEqual(Copy(False, 1, b"one"), copies["k1"])
        self.assertEqual(Copy(False, 2, b"two"), copies["k2"])  # after an OVERLOADED answer, asked again
        self.assertEqual(Copy(True, 3, b""), copies["k3"])
        self.assertIsNone(copies["k4"])
        self.assertEqual(204, len(copies))

    def test_a_wrong_secret_is_refused(self):
        with self.assertRaisesRegex(checker.PeerError, "refused the handshake"):
            checker.PeerConnection("127.0.0.1", self.node.peer_port, b"another secret", wait=2)

    def test_a_node_that_does_not_know_the_secret_is_not_believed(self):
        self.node.proof_secret = b"another secret"  # it lets us in, but cannot prove the secret
        with self.assertRaisesRegex(checker.PeerError, "proof of the cluster secret is wrong"):
            checker.PeerConnection("127.0.0.1", self.node.peer_port, SECRET, wait=2)

    def test_peer_read(self):
        out = io.StringIO()
        env = dict(os.environ, RINGKV_CLUSTER_SECRET=SECRET.decode())
        with unittest.mock.patch.dict(os.environ, env), contextlib.redirect_stdout(out):
            checker.main(["peer-read", "--port", str(self.node.peer_port), "--key", "k1"])
            self.assertEqual("one", out.getvalue())
            with self.assertRaises(SystemExit) as tombstone:
                checker.main(["peer-read", "--port", str(self.node.peer_port), "--key", "k3"])
            with self.assertRaises(SystemExit) as absent:
                checker.main(["peer-read", "--port", str(self.node.peer_port), "--key", "k4"])
        self.assertIn("tombstone", str(tombstone.exception.code))
        self.assertIn("no copy", str(absent.exception.code))


class EndToEndTest(unittest.TestCase):
    """load, check and census against fake nodes that store everything they are told."""

    def test_load_check_census(self):
        nodes = [FakeNode(name="http://fake-%d:8080" % i) for i in range(3)]
        for node in nodes:
            self.addCleanup(node.close)
        # One store behind all three: every write lands on every "pod".
        for node in nodes[1:]:
            node.share_store(nodes[0])
        pods = [arg for i, n in enumerate(nodes) for arg in ("--pod", "ringkv-%d=127.0.0.1:%d" % (i, n.peer_port))]
        work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, work)
        record = os.path.join(work, "record.json")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            checker.main(["load", "--url", nodes[0].url, "--url", nodes[1].url, "--record", record,
                          "--keys", "50", "--duration", "0.5", "--min-acked", "10"])
            checker.main(["load", "--url", nodes[0].url, "--record", record, "--resume", record,
                          "--keys", "50", "--duration", "0.3"])
            checker.main(["check", "--url", nodes[2].url, "--record", record])
            with unittest.mock.patch.dict(os.environ, {"RINGKV_CLUSTER_SECRET": SECRET.decode()}):
                checker.main(["census", "--record", record, "--settle", "0"]
                             + pods)
        text = out.getvalue()
        self.assertRegex(text, r"check .*keys=50 ok=50 lost=0 stale-but-accepted=0 errors=0")
        self.assertRegex(text, r"census of 3 pods, RF 3: keys=50 held>=3: 50 under-replicated=0")
        saved = checker.load_record(record)
        self.assertEqual(2, len(saved["runs"]))

        # An acknowledged write goes missing on one pod: the census sees it; then on the quorum: lost.
        key = next(k for k, e in saved["keys"].items() if e["acked"] and e["acked"]["op"] == "put")
        nodes[2].store = dict(nodes[0].store)
        nodes[2].store[key.encode()] = (True, 10**9, b"")
        with contextlib.redirect_stdout(io.StringIO()) as census_out, \
                unittest.mock.patch.dict(os.environ, {"RINGKV_CLUSTER_SECRET": SECRET.decode()}), \
                self.assertRaises(SystemExit):
            checker.main(["census", "--record", record, "--settle", "0"]
                         + pods)
        self.assertIn("UNDER-REPLICATED %s: held by 2 of 3 pods" % key, census_out.getvalue())
        with contextlib.redirect_stdout(io.StringIO()) as check_out, self.assertRaises(SystemExit):
            checker.main(["check", "--url", nodes[2].url, "--record", record])
        self.assertRegex(check_out.getvalue(), r"LOST %s: read 404" % key)
        self.assertRegex(check_out.getvalue(), r"lost=1 stale-but-accepted=0 errors=0")

    def test_writes_without_an_acknowledgement(self):
        writer, reader = FakeNode(flaky=True), FakeNode()
        for node in (writer, reader):
            self.addCleanup(node.close)
        reader.share_store(writer)
        work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, work)
        record = os.path.join(work, "record.json")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            checker.main(["load", "--url", writer.url, "--record", record, "--keys", "20", "--threads", "2",
                          "--duration", "0.5", "--quarantine", "0.05"])
            checker.main(["check", "--url", reader.url, "--record", record, "--verbose"])
        text = out.getvalue()
        self.assertRegex(text, r"failed by status: 504=\d+ BadStatusLine=\d+")
        self.assertRegex(text, r"keys=20 ok=\d+ lost=0 stale-but-accepted=\d+ errors=0")
        entries = checker.load_record(record)["keys"]
        self.assertTrue(any(e["later"] for e in entries.values()), text)
        # The fake applies all but one in ten of the unacknowledged writes: some keys show one.
        self.assertNotRegex(text, r"stale-but-accepted=0 ")


# ---- ring: pods answering GET /v0/cluster ------------------------------------------------------------

def member(i):
    return "http://ringkv-%d.ringkv-headless.ns.svc.cluster.local:8080" % i


class FakeClusterView:
    """Answers GET /v0/cluster with the next of self.answers while there are any, then with
    self.members (a list of names); 503 for None."""

    def __init__(self, members):
        self.members, self.answers = members, []
        view = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                assert self.path == "/v0/cluster", self.path
                members = view.answers.pop(0) if view.answers else view.members
                status, body = (503, b"") if members is None else (200, json.dumps({
                    "self": member(0), "clusterPort": 7070, "version": 3, "known": True,
                    "members": [{"name": name, "address": "10.0.0.1", "state": "UP", "dataState": "NORMAL"}
                                for name in members]}).encode())
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class RingTest(unittest.TestCase):
    FIVE = [member(i) for i in range(5)]

    def test_difference(self):
        self.assertEqual(([member(4)], []), checker.ring_difference(self.FIVE, self.FIVE[:4]))
        self.assertEqual(([], [member(5)]), checker.ring_difference(self.FIVE[:5], self.FIVE + [member(5)]))
        self.assertEqual("ringkv-4", checker.short_member(member(4)))
        self.assertEqual("4 members, without ringkv-4", checker.describe_view(self.FIVE, self.FIVE[:4]))
        self.assertEqual("the 5 expected members", checker.describe_view(self.FIVE, list(reversed(self.FIVE))))
        self.assertEqual("no answer", checker.describe_view(self.FIVE, None))

    def watch(self, pods, seconds):
        """Runs ring over the fake pods for `seconds`: (exit code, output)."""
        args = ["ring", "--interval", "0.02", "--duration", str(seconds), "--timeout", "1"]
        for i, pod in enumerate(pods):
            args += ["--pod", "ringkv-%d=%s" % (i, pod.url)]
        for name in self.FIVE:
            args += ["--expect", name]
        out, code = io.StringIO(), 0
        with contextlib.redirect_stdout(out):
            try:
                checker.main(args)
            except SystemExit as e:
                code = e.code
        return code, out.getvalue()

    def pods(self, n):
        pods = [FakeClusterView(list(self.FIVE)) for _ in range(n)]
        for pod in pods:
            self.addCleanup(pod.close)
        return pods

    def test_an_unchanged_ring_passes(self):
        code, text = self.watch(self.pods(3), 0.3)
        self.assertEqual(0, code, text)
        self.assertRegex(text, r"ring: \d+ rounds in .* over 3 pods .*: \d+ answers, 0 of them not the 5 expected members")
        self.assertEqual(3, text.count("sees the 5 expected members"))

    def test_a_member_dropped_for_a_while_fails(self):
        pods = self.pods(3)
        # pod 1's 2nd and 3rd answers lack ringkv-4, its later ones have all five again.
        pods[1].answers = [list(self.FIVE), self.FIVE[:4], self.FIVE[:4]]
        code, text = self.watch(pods, 0.5)
        self.assertEqual(1, code, text)
        self.assertRegex(text, r"ring \+[0-9.]+s: ringkv-1 sees 4 members, without ringkv-4\n")
        self.assertRegex(text, r"ring: CHANGED: first at \+[0-9.]+ s \(ringkv-1 saw 4 members, without ringkv-4\)")
        self.assertRegex(text, r"\d+ answers, 2 of them not the 5 expected members")
        # Back to all five: printed as a change too.
        self.assertEqual(4, text.count("sees the 5 expected members"), text)

    def test_a_pod_that_does_not_answer_is_not_watched(self):
        pods = self.pods(2)
        pods[1].members = None
        code, text = self.watch(pods, 0.2)
        self.assertEqual(1, code, text)
        self.assertIn("ringkv-1 sees no answer", text)
        self.assertIn("ring: NOT WATCHED: ringkv-1 answered fewer than half of the rounds", text)
        self.assertNotIn("CHANGED", text)

    def test_the_stop_file_ends_the_watch(self):
        work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, work)
        stop = os.path.join(work, "stop")
        pods = self.pods(1)
        started = time.monotonic()
        threading.Timer(0.2, lambda: open(stop, "w").close()).start()
        with contextlib.redirect_stdout(io.StringIO()):
            checker.main(["ring", "--pod", "ringkv-0=%s" % pods[0].url, "--interval", "0.02",
                          "--stop-file", stop, "--duration", "30"] + [a for n in self.FIVE for a in ("--expect", n)])
        self.assertLess(time.monotonic() - started, 5)


if __name__ == "__main__":
    unittest.main()
