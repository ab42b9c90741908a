"""The node-to-node protocol against a fake node: the handshake both ways, pipelined READs with
retries, and peer-read."""

import contextlib
import io
import os
import unittest
import unittest.mock

from checker import cli, wire
from checker.tests.fakes import SECRET, FakeNode
from checker.wire import Copy


class ProtocolTest(unittest.TestCase):

    def setUp(self):
        self.node = FakeNode(overloaded_once={b"k2"})
        self.addCleanup(self.node.close)
        self.node.write(b"k1", False, b"one")
        self.node.write(b"k2", False, b"two")
        self.node.write(b"k3", True, b"")

    def test_handshake_and_pipelined_reads(self):
        connection = wire.PeerConnection("127.0.0.1", self.node.peer_port, SECRET, wait=2)
        self.addCleanup(connection.close)
        self.assertEqual("http://fake-0:8080", connection.server_name)
        copies = connection.read_many(["k1", "k2", "k3", "k4"] + ["x%d" % i for i in range(200)], window=7)
        self.assertEqual(Copy(False, 1, b"one"), copies["k1"])
        self.assertEqual(Copy(False, 2, b"two"), copies["k2"])  # after an OVERLOADED answer, asked again
        self.assertEqual(Copy(True, 3, b""), copies["k3"])
        self.assertIsNone(copies["k4"])
        self.assertEqual(204, len(copies))

    def test_a_wrong_secret_is_refused(self):
        with self.assertRaisesRegex(wire.PeerError, "refused the handshake"):
            wire.PeerConnection("127.0.0.1", self.node.peer_port, b"another secret", wait=2)

    def test_a_node_that_does_not_know_the_secret_is_not_believed(self):
        self.node.proof_secret = b"another secret"  # it lets us in, but cannot prove the secret
        with self.assertRaisesRegex(wire.PeerError, "proof of the cluster secret is wrong"):
            wire.PeerConnection("127.0.0.1", self.node.peer_port, SECRET, wait=2)

    def test_peer_read(self):
        out = io.StringIO()
        env = dict(os.environ, RINGKV_CLUSTER_SECRET=SECRET.decode())
        with unittest.mock.patch.dict(os.environ, env), contextlib.redirect_stdout(out):
            cli.main(["peer-read", "--port", str(self.node.peer_port), "--key", "k1"])
            self.assertEqual("one", out.getvalue())
            with self.assertRaises(SystemExit) as tombstone:
                cli.main(["peer-read", "--port", str(self.node.peer_port), "--key", "k3"])
            with self.assertRaises(SystemExit) as absent:
                cli.main(["peer-read", "--port", str(self.node.peer_port), "--key", "k4"])
        self.assertIn("tombstone", str(tombstone.exception.code))
        self.assertIn("no copy", str(absent.exception.code))


class TransportTest(unittest.TestCase):
    """Plaintext unless the release's CA, certificate and key are all given (the chart's TLS)."""

    def test_plaintext_without_the_three_files(self):
        with unittest.mock.patch.dict(os.environ, {"RINGKV_CA_FILE": "/ca.crt"}, clear=True):
            self.assertIsNone(wire.tls_context())

    def test_the_http_client_sends_the_token_and_trusts_the_ca_only_for_https(self):
        from checker.http_client import HttpClient
        with unittest.mock.patch.dict(os.environ, {"RINGKV_TOKEN": "t0ken"}, clear=True):
            plain = HttpClient("http://127.0.0.1:8080", 1)
            secure = HttpClient("https://127.0.0.1:8443", 1)
        self.assertEqual(plain.headers, {"Authorization": "Bearer t0ken"})
        self.assertIsNone(plain.tls)
        self.assertIsNotNone(secure.tls)


class RecordFormatTest(unittest.TestCase):
    """The layout itself is checked against the service's RecordCodec by its RecordLayoutTest."""

    def test_encoding_and_decoding_agree(self):
        for copy in (Copy(False, 2**40 + 5, b"value"), Copy(True, 7, b"")):
            self.assertEqual(copy, wire.decode_record(wire.encode_record(copy)))

    def test_what_is_not_a_record_of_the_format_is_refused(self):
        with self.assertRaisesRegex(wire.PeerError, "not a record"):
            wire.decode_record(b"\x01\x00")
        with self.assertRaisesRegex(wire.PeerError, "not a record"):
            wire.decode_record(b"\x02" + bytes(9))
