"""The node-to-node protocol, as far as the checker speaks it: the handshake that proves the
cluster secret both ways, and pipelined READs of a node's own copies (census, peer-read).
It mirrors service/.../peer/Wire.java, Handshake.java and record/RecordCodec.java."""

import collections
import hashlib
import hmac
import os
import socket
import ssl
import struct
import time

# A frame: int32 length (of what follows: 5 + payload), byte type, int32 request id, payload.
HELLO, AUTH, WELCOME, REFUSED = 0x01, 0x02, 0x03, 0x04
READ = 0x10
RECORD, NOT_FOUND, DONE, ERROR = 0x20, 0x21, 0x22, 0x23
MAGIC = b"RKV1"
PROTOCOL_VERSION = 1
# Wire.ErrorCode: a request refused for the moment, worth asking again.
RETRYABLE_ERRORS = {1: "OVERLOADED", 3: "STORAGE", 5: "INTERNAL"}

# A record's binary form (RECORD's payload), as RecordCodec.java defines it: format, flags, big-endian
# timestamp, then the value. Only here in the checker; RecordLayoutTest (service) checks it against the Java.
RECORD_FORMAT = 1
RECORD_FORMAT_AT = 0
RECORD_FLAGS_AT = 1
RECORD_TIMESTAMP_AT = 2
RECORD_HEADER = 10
RECORD_TOMBSTONE_FLAG = 1

Copy = collections.namedtuple("Copy", "tombstone timestamp value")  # value: bytes (b"" for a tombstone)


class PeerError(Exception):
    """The node refused us, or said something this checker does not understand."""


def encode_frame(kind, ident, payload=b""):
    return struct.pack(">iBi", 5 + len(payload), kind, ident) + payload


def read_frame(stream):
    """(type, id, payload) from a binary file-like object; EOFError when the node closed it."""
    header = stream.read(4)
    if len(header) < 4:
        raise EOFError("the node closed the connection")
    (length,) = struct.unpack(">i", header)
    if length < 5:
        raise PeerError("a frame of length %d" % length)
    body = stream.read(length)
    if len(body) < length:
        raise EOFError("the node closed the connection mid-frame")
    return body[0], struct.unpack(">i", body[1:5])[0], body[5:]


def encode_key(key):
    raw = key.encode() if isinstance(key, str) else key
    return struct.pack(">H", len(raw)) + raw


def decode_record(payload):
    """A RECORD's payload as a Copy."""
    if len(payload) < RECORD_HEADER or payload[RECORD_FORMAT_AT] != RECORD_FORMAT:
        raise PeerError("not a record of format %d: %r" % (RECORD_FORMAT, payload[:RECORD_HEADER]))
    (timestamp,) = struct.unpack_from(">q", payload, RECORD_TIMESTAMP_AT)
    return Copy(bool(payload[RECORD_FLAGS_AT] & RECORD_TOMBSTONE_FLAG), timestamp, payload[RECORD_HEADER:])


def encode_record(copy):
    """A Copy as a RECORD's payload (what a node sends: for the tests' fake node)."""
    header = bytearray(RECORD_HEADER)
    header[RECORD_FORMAT_AT] = RECORD_FORMAT
    header[RECORD_FLAGS_AT] = RECORD_TOMBSTONE_FLAG if copy.tombstone else 0
    struct.pack_into(">q", header, RECORD_TIMESTAMP_AT, copy.timestamp)
    return bytes(header) + copy.value


def client_proof(secret, server_nonce, client_nonce, name):
    return hmac.new(secret, b"ringkv client" + server_nonce + client_nonce + name, hashlib.sha256).digest()


def server_proof(secret, client_nonce, server_nonce, name):
    return hmac.new(secret, b"ringkv server" + client_nonce + server_nonce + name, hashlib.sha256).digest()


def tls_context():
    """Mutual TLS as a node speaks it on the cluster port, when $RINGKV_CA_FILE, $RINGKV_CLIENT_CERT and
    $RINGKV_CLIENT_KEY are set (the release's CA, certificate and key); None: plaintext."""
    ca, cert, key = (os.environ.get(n) for n in ("RINGKV_CA_FILE", "RINGKV_CLIENT_CERT", "RINGKV_CLIENT_KEY"))
    if not (ca and cert and key):
        return None
    context = ssl.create_default_context(cafile=ca)
    context.load_cert_chain(cert, key)
    return context


class PeerConnection:
    """One authenticated connection to a node's cluster port, as a peer has: many READs on it."""

    def __init__(self, host, port, secret, name=None, wait=20.0, timeout=30.0):
        """Connects (retrying for `wait` seconds until the node greets: a port-forward takes a
        moment to listen and to reach the pod), over mutual TLS when tls_context() says so, proves
        the secret under `name` (default $RINGKV_PEER_NAME, or e2e/checker) and checks the node's proof."""
        secret = secret.encode() if isinstance(secret, str) else secret
        name = name or os.environ.get("RINGKV_PEER_NAME") or "e2e/checker"
        tls = tls_context()
        deadline = time.monotonic() + wait
        while True:
            sock = None
            try:
                sock = socket.create_connection((host, port), timeout=timeout)
                if tls is not None:
                    sock = tls.wrap_socket(sock, server_hostname=host)
                stream = sock.makefile("rb")
                kind, _, hello = read_frame(stream)
                break
            except (OSError, EOFError) as e:
                if sock is not None:
                    sock.close()
                if time.monotonic() > deadline:
                    raise PeerError("no greeting on %s:%d: %s" % (host, port, e)) from e
                time.sleep(0.3)
        self.sock, self.stream = sock, stream
        try:
            if kind != HELLO or hello[:4] != MAGIC:
                raise PeerError("not a ringkv greeting: type %d, %r" % (kind, hello[:4]))
            server_nonce = hello[6:38]
            client_nonce, own_name = os.urandom(32), name.encode()
            self._send(AUTH, 0, struct.pack(">H", PROTOCOL_VERSION) + client_nonce + encode_key(own_name)
                       + client_proof(secret, server_nonce, client_nonce, own_name))
            kind, _, answer = read_frame(self.stream)
            if kind == REFUSED:
                raise PeerError("the node refused the handshake: %s" % answer.decode(errors="replace"))
            if kind != WELCOME:
                raise PeerError("expected WELCOME, got type %d" % kind)
            (name_length,) = struct.unpack(">H", answer[34:36])
            server_name = answer[36:36 + name_length]
            if not hmac.compare_digest(server_proof(secret, client_nonce, server_nonce, server_name), answer[2:34]):
                raise PeerError("the node's proof of the cluster secret is wrong")
        except BaseException:
            self.close()
            raise
        self.server_name = server_name.decode(errors="replace")
        self._next_id = 1

    def _send(self, kind, ident, payload):
        self.sock.sendall(encode_frame(kind, ident, payload))

    def read_many(self, keys, window=64, attempts=5):
        """{key: Copy, or None for no copy} for each key: READs pipelined, at most `window` open at
        once, answers matched by request id (they may come in any order). A key answered with a
        retryable ERROR (the node is busy) is asked again, up to `attempts` times."""
        pending = collections.deque((key, 1) for key in keys)
        open_requests, copies = {}, {}
        while pending or open_requests:
            batch = []
            while pending and len(open_requests) < window:
                key, attempt = pending.popleft()
                ident = self._next_id
                self._next_id = self._next_id + 1 if self._next_id < 2**31 - 1 else 1
                open_requests[ident] = (key, attempt)
                batch.append(encode_frame(READ, ident, encode_key(key)))
            if batch:
                self.sock.sendall(b"".join(batch))
            kind, ident, payload = read_frame(self.stream)
            if ident not in open_requests:
                raise PeerError("an answer (type %d) to request %d, which is not open" % (kind, ident))
            key, attempt = open_requests.pop(ident)
            if kind == RECORD:
                copies[key] = decode_record(payload)
            elif kind == NOT_FOUND:
                copies[key] = None
            elif kind == ERROR and len(payload) >= 2:
                (code,) = struct.unpack(">H", payload[:2])
                message = payload[2:].decode(errors="replace")
                if code not in RETRYABLE_ERRORS or attempt >= attempts:
                    raise PeerError("READ %s: error %d %s" % (key, code, message))
                time.sleep(0.05 * attempt)
                pending.append((key, attempt + 1))
            else:
                raise PeerError("READ %s: unexpected answer type %d" % (key, kind))
        return copies

    def read(self, key):
        return self.read_many([key])[key]

    def close(self):
        try:
            self.stream.close()
        finally:
            self.sock.close()

