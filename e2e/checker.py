#!/usr/bin/env python3
"""A Jepsen-style checker of ringkv's writes, for the end-to-end test (e2e/run.sh).

Python 3.11, standard library only. Modes:

  load       Writer threads PUT (mostly) and DELETE the keys <prefix>0 .. <prefix><keys-1> at
             replicas=2/3 through one or more client base URLs, without pausing, until a stop file
             appears (or --duration passes). Each key belongs to exactly one thread, so its history
             is sequential. The record keeps, per key, the last acknowledged operation (PUT 201,
             DELETE 202) and every LATER attempt without an acknowledgement (a 5xx, a timeout, a
             broken connection): such a write may or may not have been applied. Writes the record
             as JSON and prints the counts. --resume continues an earlier record (same keys).
  check      Reads every key of a record at replicas=2/3 through a base URL and classifies each
             answer (classify()): ok, lost, stale-but-accepted or error. Exits 1 if any is lost or
             an error. Prints: keys, ok, lost, stale-but-accepted, errors.
  census     Reads every pod's OWN copy of every key over the node-to-node protocol (the pods'
             cluster ports, port-forwarded; the handshake proves the cluster secret) and counts,
             per key, the pods holding what the record expects (holds()). Exits 1 if a key is held
             by fewer than RF = min(3, pods) pods ("under-replicated"), after re-reading those keys
             for up to --settle seconds (hints and repair may still be catching up).
  peer-read  Prints one pod's own live value of one key; fails on no copy or a tombstone.
  ring       Watches the ring as each of several pods sees it: GET /v0/cluster of every pod every
             --interval seconds until a stop file appears (or --duration passes), comparing its
             members' names with the --expect'ed ones. Prints each change of a pod's view as it
             happens, then a summary. Exits 1 if any answer differed from the expected members, or
             if a pod answered fewer than half of the rounds (then the ring was not watched).

Classification of a read (check) against a key's record:
  ok                  it shows the last acknowledged operation: its value, or 404 for a delete
                      (or for a key never acknowledged at all);
  stale-but-accepted  it shows instead one of the attempts after that without an acknowledgement
                      (it may have been applied; stamped later by the same coordinator, it wins);
                      accepted, but counted apart from ok;
  lost                anything else: an acknowledged value missing (404), an older value, a value
                      never written;
  error               no 200 or 404 after a few retries (5xx, broken connections).
A pod's copy (census) holds a key if it shows one of those same accepted outcomes: for a delete,
a tombstone or no copy at all. After a scale-up the old owners keep their copies, so a key on more
than RF pods is fine: the test is ">= RF".

Per key, every write goes through the same URL, i.e. one coordinator (whose hybrid clock stamps
the key's writes in order). A write that got no HTTP answer (a timeout, a broken connection) might
still reach the coordinator later and be stamped after the next one, which would make an
acknowledged write look lost; so a writer leaves such a key alone for --quarantine seconds.

The cluster secret is read from the environment (RINGKV_CLUSTER_SECRET), not the command line.
"""

import argparse
import collections
import hashlib
import hmac
import http.client
import json
import os
import random
import socket
import struct
import sys
import threading
import time
import urllib.parse

# ---- the node-to-node protocol (service/.../peer/Wire.java, Handshake.java, RecordCodec.java) ----
# A frame: int32 length (of what follows: 5 + payload), byte type, int32 request id, payload.
HELLO, AUTH, WELCOME, REFUSED = 0x01, 0x02, 0x03, 0x04
READ = 0x10
RECORD, NOT_FOUND, DONE, ERROR = 0x20, 0x21, 0x22, 0x23
MAGIC = b"RKV1"
PROTOCOL_VERSION = 1
# Wire.ErrorCode: a request refused for the moment, worth asking again.
RETRYABLE_ERRORS = {1: "OVERLOADED", 3: "STORAGE", 5: "INTERNAL"}

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
    """A RECORD's payload: byte 0 format (1), byte 1 flags (bit 0 tombstone), 2..9 timestamp, value."""
    if len(payload) < 10 or payload[0] != 1:
        raise PeerError("not a record of format 1: %r" % payload[:10])
    (timestamp,) = struct.unpack(">q", payload[2:10])
    return Copy(bool(payload[1] & 1), timestamp, payload[10:])


def client_proof(secret, server_nonce, client_nonce, name):
    return hmac.new(secret, b"ringkv client" + server_nonce + client_nonce + name, hashlib.sha256).digest()


def server_proof(secret, client_nonce, server_nonce, name):
    return hmac.new(secret, b"ringkv server" + client_nonce + server_nonce + name, hashlib.sha256).digest()


class PeerConnection:
    """One authenticated connection to a node's cluster port, as a peer has: many READs on it."""

    def __init__(self, host, port, secret, name="e2e/checker.py", wait=20.0, timeout=30.0):
        """Connects (retrying for `wait` seconds until the node greets: a port-forward takes a
        moment to listen and to reach the pod), proves the secret and checks the node's proof."""
        secret = secret.encode() if isinstance(secret, str) else secret
        deadline = time.monotonic() + wait
        while True:
            sock = None
            try:
                sock = socket.create_connection((host, port), timeout=timeout)
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


# ---- the record and its pure logic ----------------------------------------------------------------

OK, STALE, LOST, ERROR_CLASS = "ok", "stale-but-accepted", "lost", "error"


def new_entry():
    """A key's record: the last acknowledged operation (None: none yet, the key is absent) and
    the attempts after it that got no acknowledgement. An operation: {"op": "put", "value": v}
    or {"op": "delete"}; an unacknowledged one also says why ("why")."""
    return {"acked": None, "later": []}


def note_acked(entry, op):
    entry["acked"] = {k: v for k, v in op.items() if k != "why"}
    entry["later"] = []


def note_unacked(entry, op, why):
    entry["later"].append(dict(op, why=why))


def outcome(op):
    """What an operation leaves readable: its value, or None (absent) for a delete or no op."""
    return op["value"] if op is not None and op["op"] == "put" else None


def classify_observed(entry, observed):
    """OK, STALE or LOST for an observed outcome (a value, or None for absent)."""
    if observed == outcome(entry["acked"]):
        return OK
    if any(observed == outcome(op) for op in entry["later"]):
        return STALE
    return LOST


def classify(entry, status, body):
    """A GET's answer (status, body bytes) against the key's record: OK, STALE, LOST or ERROR."""
    if status == 200:
        return classify_observed(entry, body.decode("utf-8", "surrogateescape"))
    if status == 404:
        return classify_observed(entry, None)
    return ERROR_CLASS


def copy_outcome(copy):
    """What a pod's own copy shows: its value, or None for a tombstone or no copy."""
    if copy is None or copy.tombstone:
        return None
    return copy.value.decode("utf-8", "surrogateescape")


def holds(entry, copy):
    """Whether a pod's copy (a Copy, or None for none) holds an outcome the record accepts."""
    return classify_observed(entry, copy_outcome(copy)) != LOST


def census_count(entries, copies_by_pod):
    """{key: how many pods hold it} from {key: entry} and {pod: {key: Copy or None}}; a pod that
    did not answer for a key does not hold it."""
    return {key: sum(1 for copies in copies_by_pod.values() if key in copies and holds(entry, copies[key]))
            for key, entry in entries.items()}


def under_replicated(counts, rf):
    """The keys held by fewer than rf pods, sorted."""
    return sorted(key for key, held in counts.items() if held < rf)


def replication_factor(pods, factor=3):
    return min(factor, pods)


def load_record(path):
    with open(path) as f:
        record = json.load(f)
    if record.get("format") != 1:
        sys.exit("%s is not a checker record" % path)
    return record


def save_record(record, path):
    temporary = path + ".tmp"
    with open(temporary, "w") as f:
        json.dump(record, f, separators=(",", ":"))
    os.replace(temporary, path)


def key_order(key):
    prefix, _, number = key.rpartition("-")
    return (prefix, int(number)) if number.isdigit() else (key, -1)


# ---- HTTP -----------------------------------------------------------------------------------------

class NotSent(Exception):
    """The connection could not be opened: the request was not sent."""


class InDoubt(Exception):
    """The request may have been sent, but no HTTP answer came (a timeout, a broken connection)."""


class HttpClient:
    """One keep-alive connection to a base URL; reopened after a failure."""

    def __init__(self, base, timeout):
        url = urllib.parse.urlsplit(base)
        self.host, self.port, self.timeout = url.hostname, url.port or 80, timeout
        self.conn = None

    def request(self, method, path, body=None):
        if self.conn is None:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            try:
                conn.connect()
            except OSError as e:
                raise NotSent(type(e).__name__) from e
            self.conn = conn
        try:
            self.conn.request(method, path, body=body)
            response = self.conn.getresponse()
            data = response.read()
            if response.will_close:
                self.close()
            return response.status, data
        except (OSError, http.client.HTTPException) as e:
            self.close()
            raise InDoubt("timeout" if isinstance(e, TimeoutError) else type(e).__name__) from e

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def entity_path(key, replicas):
    # quote, not urlencode: ringkv reads '+' as a plus, not as a form's space.
    return "/v0/entity?id=%s&replicas=%s" % (urllib.parse.quote(key, safe=""), urllib.parse.quote(replicas, safe="/"))


# ---- load -----------------------------------------------------------------------------------------

class Tally:
    """Counts of the load's operations, overall and per time bucket; shared by the writers."""

    def __init__(self, bucket_seconds):
        self.lock = threading.Lock()
        self.counts = collections.Counter()
        self.buckets = collections.defaultdict(collections.Counter)
        self.bucket_seconds = bucket_seconds
        self.started = time.monotonic()

    def add(self, *labels):
        bucket = int((time.monotonic() - self.started) // self.bucket_seconds)
        with self.lock:
            for label in labels:
                self.counts[label] += 1
                self.buckets[bucket][label] += 1


def writer(index, base, keys, entries, args, run_id, stop, tally):
    client = HttpClient(base, args.timeout)
    rng = random.Random("%s/%d" % (run_id, index))
    quarantined = {}  # key -> monotonic time until which it is left alone
    sequence = 0
    while not stop.is_set():
        now = time.monotonic()
        free = [key for key in keys if quarantined.get(key, 0) <= now]
        if not free:
            stop.wait(0.1)
            continue
        key = rng.choice(free)
        entry = entries[key]
        if rng.random() < args.delete_ratio:
            op, method, body, want = {"op": "delete"}, "DELETE", None, 202
        else:
            sequence += 1
            value = "%s/%d/%s/%d" % (run_id, index, key, sequence)
            op, method, body, want = {"op": "put", "value": value}, "PUT", value.encode(), 201
        try:
            status, _ = client.request(method, entity_path(key, args.replicas), body)
        except NotSent:
            tally.add("ops", "refused")
            stop.wait(0.2)
            continue
        except InDoubt as e:
            note_unacked(entry, op, str(e))
            quarantined[key] = time.monotonic() + args.quarantine
            tally.add("ops", method, "unacked", "unacked:%s" % e)
            continue
        if status == want:
            note_acked(entry, op)
            tally.add("ops", method, "acked", "acked-" + method)
        elif 400 <= status < 500:
            # The node changed nothing; but the checker and the API disagree, which fails the load.
            tally.add("ops", method, "rejected", "rejected:%d" % status)
        else:
            note_unacked(entry, op, str(status))
            tally.add("ops", method, "unacked", "unacked:%d" % status)
    client.close()


def run_load(args):
    if args.resume:
        record = load_record(args.resume)
        if len(record["keys"]) != args.keys or args.prefix not in (record.get("prefix"), None):
            sys.exit("%s has %d keys with prefix %r, not %d with %r"
                     % (args.resume, len(record["keys"]), record.get("prefix"), args.keys, args.prefix))
    else:
        record = {"format": 1, "prefix": args.prefix, "runs": [],
                  "keys": {"%s%d" % (args.prefix, n): new_entry() for n in range(args.keys)}}
    entries = record["keys"]
    keys = sorted(entries, key=key_order)
    run_id = "%s-%s" % (time.strftime("%H%M%S"), os.urandom(3).hex())
    stop, tally = threading.Event(), Tally(args.bucket)
    threads = []
    for index in range(args.threads):
        base = args.url[index % len(args.url)]
        owned = keys[index::args.threads]
        thread = threading.Thread(target=writer, name="writer-%d" % index, daemon=True,
                                  args=(index, base, owned, entries, args, run_id, stop, tally))
        threads.append(thread)
        thread.start()
    deadline = time.monotonic() + args.duration
    while time.monotonic() < deadline and not (args.stop_file and os.path.exists(args.stop_file)):
        if not any(thread.is_alive() for thread in threads):
            break
        time.sleep(0.2)
    stop.set()
    for thread in threads:
        thread.join(args.timeout + 5)
    seconds = time.monotonic() - tally.started
    if any(thread.is_alive() for thread in threads):
        sys.exit("load: a writer did not stop")
    c = tally.counts
    record["runs"].append({"id": run_id, "seconds": round(seconds, 1), "counts": dict(c)})
    save_record(record, args.record)

    failures = " ".join("%s=%d" % (label.split(":", 1)[1], n) for label, n in sorted(c.items())
                        if label.startswith(("unacked:", "rejected:")))
    print("load %s: %d ops in %.1f s (%.0f/s) through %s: %d acked (%d PUT, %d DELETE), %d unacknowledged, "
          "%d rejected (4xx), %d not sent (connection refused)%s"
          % (run_id, c["ops"], seconds, c["ops"] / max(seconds, 0.001), " ".join(args.url), c["acked"],
             c["acked-PUT"], c["acked-DELETE"], c["unacked"], c["rejected"], c["refused"],
             "; failed by status: " + failures if failures else ""))
    print("load %s: per %d s (ops/acked/unacked): %s" % (run_id, args.bucket, " ".join(
        "%d/%d/%d" % (b["ops"], b["acked"], b["unacked"]) for _, b in sorted(tally.buckets.items()))))
    in_doubt = sum(1 for entry in entries.values() if entry["later"])
    print("load %s: %d keys, %d of them with unacknowledged attempts after their last acknowledgement"
          % (run_id, len(entries), in_doubt))
    if c["rejected"]:
        sys.exit("load: %d writes were rejected with a 4xx: the checker and the API disagree" % c["rejected"])
    if c["acked"] < args.min_acked:
        sys.exit("load: only %d writes were acknowledged, expected at least %d" % (c["acked"], args.min_acked))


# ---- check ----------------------------------------------------------------------------------------

def describe(entry):
    acked = entry["acked"]
    text = "never acknowledged" if acked is None else (
        "acked PUT %s" % acked["value"] if acked["op"] == "put" else "acked DELETE")
    later = entry["later"]
    if later:
        text += ", then unacked: " + ("... %d more, " % (len(later) - 5) if len(later) > 5 else "") + ", ".join(
            ("PUT %s" % op["value"] if op["op"] == "put" else "DELETE") + " (%s)" % op.get("why") for op in later[-5:])
    return text


def run_check(args):
    record = load_record(args.record)
    entries = record["keys"]
    keys = sorted(entries, key=key_order)
    results = {}

    def reader(part):
        client = HttpClient(args.url, args.timeout)
        for key in part:
            answer = None
            for attempt in range(1, args.retries + 1):
                try:
                    status, body = client.request("GET", entity_path(key, args.replicas))
                except (NotSent, InDoubt) as e:
                    answer = ("no answer: %s" % e, None, None)
                else:
                    answer = (classify(entries[key], status, body), status, body)
                    if answer[0] != ERROR_CLASS:
                        break
                if attempt < args.retries:
                    time.sleep(0.5 * attempt)
            results[key] = answer
        client.close()

    threads = [threading.Thread(target=reader, args=(keys[i::args.threads],), daemon=True)
               for i in range(args.threads)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    tally = collections.Counter(result[0] if result[0] in (OK, STALE, LOST) else ERROR_CLASS
                                for result in results.values())
    listed = collections.Counter()
    for key in keys:
        verdict, status, body = results[key]
        if verdict == OK or (verdict == STALE and not args.verbose):
            continue
        kind = verdict if verdict in (STALE, LOST) else ERROR_CLASS
        listed[kind] += 1
        if listed[kind] <= 20:
            shown = {200: lambda: "200 %r" % body.decode(errors="replace"), 404: lambda: "404",
                     None: lambda: verdict}.get(status, lambda: str(status))()
            print("  %s %s: read %s; record: %s" % (kind.upper(), key, shown, describe(entries[key])))
    print("check %s at %s: keys=%d ok=%d lost=%d stale-but-accepted=%d errors=%d (%.1f s)"
          % (args.url, args.replicas, len(keys), tally[OK], tally[LOST], tally[STALE], tally[ERROR_CLASS],
             time.monotonic() - started))
    if tally[LOST] or tally[ERROR_CLASS]:
        sys.exit(1)


# ---- census ---------------------------------------------------------------------------------------

def secret_from_env():
    secret = os.environ.get("RINGKV_CLUSTER_SECRET", "")
    if not secret:
        sys.exit("set RINGKV_CLUSTER_SECRET to the cluster secret")
    return secret


def parse_pod(text):
    name, _, address = text.partition("=")
    host, _, port = address.rpartition(":")
    if not name or not host or not port.isdigit():
        raise argparse.ArgumentTypeError("expected NAME=HOST:PORT, got %r" % text)
    return name, host, int(port)


def show_copy(copy):
    if copy is None:
        return "no copy"
    if copy.tombstone:
        return "tombstone@%d" % copy.timestamp
    return "%s@%d" % (copy.value.decode(errors="replace"), copy.timestamp)


def run_census(args):
    record = load_record(args.record)
    entries = record["keys"]
    keys = sorted(entries, key=key_order)
    pods = args.pod
    rf = args.rf or replication_factor(len(pods))
    secret = secret_from_env()
    connections, copies_by_pod, failures = {}, {}, {}

    def read_pod(name, host, port, wanted):
        try:
            if name not in connections:
                connections[name] = PeerConnection(host, port, secret, wait=args.wait)
            copies_by_pod.setdefault(name, {}).update(connections[name].read_many(wanted, window=args.window))
        except (PeerError, OSError, EOFError) as e:
            failures[name] = str(e)
            connection = connections.pop(name, None)
            if connection is not None:
                connection.close()

    def read_all(wanted):
        failures.clear()
        threads = [threading.Thread(target=read_pod, args=(name, host, port, wanted), daemon=True)
                   for name, host, port in pods]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    started = time.monotonic()
    read_all(keys)
    counts = census_count(entries, copies_by_pod)
    first = under_replicated(counts, rf)
    under, rounds = first, 0
    deadline = time.monotonic() + args.settle
    while under and time.monotonic() < deadline:
        time.sleep(min(5.0, max(0.0, deadline - time.monotonic())))
        rounds += 1
        read_all(under)
        counts = census_count(entries, copies_by_pod)
        under = under_replicated(counts, rf)
    for connection in connections.values():
        connection.close()

    for name, error in sorted(failures.items()):
        print("  %s: %s" % (name, error))
    for key in under[:10]:
        print("  UNDER-REPLICATED %s: held by %d of %d pods; record: %s; copies: %s"
              % (key, counts[key], len(pods), describe(entries[key]),
                 ", ".join("%s %s" % (name, show_copy(copies_by_pod.get(name, {}).get(key))) for name, _, _ in pods)))
    per_pod = []
    for name, _, _ in pods:
        copies = copies_by_pod.get(name, {})
        values = sum(1 for key in keys if key in copies and copies[key] is not None and not copies[key].tombstone
                     and holds(entries[key], copies[key]))
        absent_ok = sum(1 for key in keys if key in copies and copy_outcome(copies[key]) is None
                        and holds(entries[key], copies[key]))
        other = sum(1 for key in keys if key in copies and not holds(entries[key], copies[key]))
        per_pod.append("%s %d+%d/%d" % (name, values, absent_ok, other))
    spread = collections.Counter(counts.values())
    print("census: per pod (values held + deletes held / other copies): %s" % ", ".join(per_pod))
    print("census: pods holding each key: %s" % " ".join("%d:%d" % (n, spread[n]) for n in sorted(spread)))
    print("census of %d pods, RF %d: keys=%d held>=%d: %d under-replicated=%d (first pass %d, %d re-reads) "
          "unreadable-pods=%d (%.1f s)"
          % (len(pods), rf, len(keys), rf, len(keys) - len(under), len(under), len(first), rounds,
             len(failures), time.monotonic() - started))
    if under or failures:
        sys.exit(1)


def run_peer_read(args):
    connection = PeerConnection(args.host, args.port, secret_from_env(), name="e2e/run.sh", wait=args.wait)
    try:
        copy = connection.read(args.key)
    finally:
        connection.close()
    if copy is None:
        sys.exit("%s holds no copy of %s" % (connection.server_name, args.key))
    if copy.tombstone:
        sys.exit("%s holds a tombstone for %s" % (connection.server_name, args.key))
    sys.stdout.write(copy.value.decode(errors="replace"))


# ---- ring -----------------------------------------------------------------------------------------

def ring_members(body):
    """The sorted member names of a GET /v0/cluster answer (JSON, bytes or str)."""
    return sorted(member["name"] for member in json.loads(body)["members"])


def ring_difference(expected, seen):
    """(missing, unexpected): the expected names a pod's view lacks, and the names it has besides."""
    return sorted(set(expected) - set(seen)), sorted(set(seen) - set(expected))


def short_member(name):
    """http://ringkv-4.ringkv-headless.ns.svc.cluster.local:8080 -> ringkv-4 (for the log)."""
    host = urllib.parse.urlsplit(name).hostname or name
    return host.split(".")[0]


def describe_view(expected, seen):
    if seen is None:
        return "no answer"
    missing, unexpected = ring_difference(expected, seen)
    if not missing and not unexpected:
        return "the %d expected members" % len(expected)
    text = "%d members" % len(seen)
    if missing:
        text += ", without %s" % " ".join(short_member(name) for name in missing)
    if unexpected:
        text += ", with %s too" % " ".join(short_member(name) for name in unexpected)
    return text


def parse_named_url(text):
    name, _, url = text.partition("=")
    if not name or not url.startswith("http"):
        raise argparse.ArgumentTypeError("expected NAME=URL, got %r" % text)
    return name, url.rstrip("/")


def run_ring(args):
    expected = sorted(args.expect)
    pods = args.pod
    clients = {name: HttpClient(url, args.timeout) for name, url in pods}
    started = time.monotonic()
    deadline = started + args.duration
    last = {}  # pod -> the last view printed (a tuple of names, or None for no answer)
    answered, differed = collections.Counter(), collections.Counter()
    first = latest = None  # (seconds, pod, description) of the first and latest answer that differed
    rounds = 0
    while True:
        rounds += 1
        for name, _ in pods:
            try:
                status, body = clients[name].request("GET", "/v0/cluster")
                seen = tuple(ring_members(body)) if status == 200 else None
            except (NotSent, InDoubt, ValueError, KeyError, TypeError):
                seen = None
            at = time.monotonic() - started
            if seen is not None:
                answered[name] += 1
                if list(seen) != expected:
                    differed[name] += 1
                    latest = (at, name, describe_view(expected, seen))
                    first = first or latest
            if name not in last or last[name] != seen:
                print("ring +%.1fs: %s sees %s" % (at, name, describe_view(expected, seen)), flush=True)
                last[name] = seen
        if time.monotonic() >= deadline or (args.stop_file and os.path.exists(args.stop_file)):
            break
        time.sleep(max(0.0, min(args.interval, deadline - time.monotonic())))
    for client in clients.values():
        client.close()

    seconds = time.monotonic() - started
    total = sum(answered.values())
    print("ring: %d rounds in %.1f s over %d pods (%s): %d answers, %d of them not the %d expected members"
          % (rounds, seconds, len(pods), " ".join("%s %d/%d" % (name, answered[name], rounds) for name, _ in pods),
             total, sum(differed.values()), len(expected)))
    if first:
        print("ring: CHANGED: first at +%.1f s (%s saw %s), last at +%.1f s (%s saw %s)" % (first + latest))
    unwatched = [name for name, _ in pods if answered[name] * 2 < rounds]
    if unwatched:
        print("ring: NOT WATCHED: %s answered fewer than half of the rounds" % " ".join(unwatched))
    if first or unwatched:
        sys.exit(1)


# ---- command line ---------------------------------------------------------------------------------

def parser():
    top = argparse.ArgumentParser(
        prog="checker.py",
        description="Jepsen-style checker of ringkv writes for e2e/run.sh: load writes and record "
                    "what was acknowledged; check reads them back at a quorum; census counts each "
                    "pod's own copies; ring watches each pod's view of the ring. The cluster secret "
                    "comes from $RINGKV_CLUSTER_SECRET.",
        epilog="More in the module docstring: python3 -c 'import checker; help(checker)' (in e2e/).")
    modes = top.add_subparsers(dest="mode", required=True, metavar="MODE")

    load = modes.add_parser("load", help="write under load and record what was acknowledged")
    load.add_argument("--url", action="append", required=True,
                      help="client base URL; repeat it to spread the writer threads over several")
    load.add_argument("--record", required=True, help="where to write the record (JSON)")
    load.add_argument("--resume", help="an earlier record to continue (the keys' starting state)")
    load.add_argument("--threads", type=int, default=4, help="writer threads (default 4)")
    load.add_argument("--keys", type=int, default=1000, help="keys in the key space (default 1000)")
    load.add_argument("--prefix", default="scale-", help="key prefix (default scale-)")
    load.add_argument("--replicas", default="2/3", help="replicas=ack/from of every write (default 2/3)")
    load.add_argument("--delete-ratio", type=float, default=0.15, help="share of DELETEs (default 0.15)")
    load.add_argument("--stop-file", help="stop once this file exists")
    load.add_argument("--duration", type=float, default=600, help="stop after this many seconds (default 600)")
    load.add_argument("--timeout", type=float, default=5, help="HTTP timeout in seconds (default 5)")
    load.add_argument("--quarantine", type=float, default=10,
                      help="seconds a key is left alone after a write without an HTTP answer (default 10)")
    load.add_argument("--min-acked", type=int, default=1, help="fail unless this many writes were acknowledged")
    load.add_argument("--bucket", type=int, default=10, help="seconds per line of the timeline (default 10)")

    check = modes.add_parser("check", help="read every recorded key back at a quorum and classify it")
    check.add_argument("--url", required=True, help="client base URL to read through")
    check.add_argument("--record", required=True)
    check.add_argument("--replicas", default="2/3", help="replicas=ack/from of the reads (default 2/3)")
    check.add_argument("--threads", type=int, default=4, help="reader threads (default 4)")
    check.add_argument("--retries", type=int, default=5, help="reads of a key before it is an error (default 5)")
    check.add_argument("--timeout", type=float, default=5, help="HTTP timeout in seconds (default 5)")
    check.add_argument("--verbose", action="store_true", help="also list the stale-but-accepted keys")

    census = modes.add_parser("census", help="count the pods holding each recorded key (node-to-node READs)")
    census.add_argument("--record", required=True)
    census.add_argument("--pod", action="append", required=True, type=parse_pod, metavar="NAME=HOST:PORT",
                        help="a pod and where its cluster port is forwarded; once per pod")
    census.add_argument("--rf", type=int, default=0, help="copies each key needs (default min(3, pods))")
    census.add_argument("--settle", type=float, default=60,
                        help="seconds to re-read under-replicated keys before failing (default 60)")
    census.add_argument("--window", type=int, default=64, help="READs open at once per connection (default 64)")
    census.add_argument("--wait", type=float, default=20, help="seconds to wait for a node's greeting (default 20)")

    peer = modes.add_parser("peer-read", help="print one pod's own live value of one key (fails on none)")
    peer.add_argument("--host", default="127.0.0.1")
    peer.add_argument("--port", type=int, required=True, help="the local port forwarded to the pod's cluster port")
    peer.add_argument("--key", required=True)
    peer.add_argument("--wait", type=float, default=20, help="seconds to wait for the node's greeting (default 20)")

    ring = modes.add_parser("ring", help="watch each pod's view of the ring (GET /v0/cluster) against the expected members")
    ring.add_argument("--pod", action="append", required=True, type=parse_named_url, metavar="NAME=URL",
                      help="a pod and a base URL of its public port; once per pod")
    ring.add_argument("--expect", action="append", required=True, metavar="MEMBER",
                      help="a member's name as /v0/cluster lists it; once per member")
    ring.add_argument("--interval", type=float, default=3, help="seconds between rounds (default 3)")
    ring.add_argument("--stop-file", help="stop once this file exists")
    ring.add_argument("--duration", type=float, default=600, help="stop after this many seconds (default 600)")
    ring.add_argument("--timeout", type=float, default=5, help="HTTP timeout in seconds (default 5)")
    return top


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        {"load": run_load, "check": run_check, "census": run_census, "peer-read": run_peer_read,
         "ring": run_ring}[args.mode](args)
    except PeerError as e:
        sys.exit("%s: %s" % (args.mode, e))


if __name__ == "__main__":
    main()
