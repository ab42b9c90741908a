"""load: writer threads PUT and DELETE their own keys at 2/3 without pausing, and record per key
the last acknowledged operation and every later attempt without an acknowledgement."""

import collections
import os
import random
import sys
import threading
import time

from .http_client import HttpClient, InDoubt, NotSent, entity_path
from .record import key_order, load_record, new_entry, note_acked, note_unacked, save_record

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
    if 0 <= args.max_unacked < c["unacked"]:
        sys.exit("load: %d writes went unacknowledged (%s), at most %d allowed"
                 % (c["unacked"], failures, args.max_unacked))
