"""census and peer-read: each pod's OWN copies, read over the node-to-node protocol (the pods'
cluster ports, port-forwarded; the handshake proves the cluster secret)."""

import collections
import os
import sys
import threading
import time

from .record import census_count, copy_outcome, describe, holds, key_order, load_record, replication_factor, under_replicated
from .wire import PeerConnection, PeerError


def secret_from_env():
    secret = os.environ.get("RINGKV_CLUSTER_SECRET", "")
    if not secret:
        sys.exit("set RINGKV_CLUSTER_SECRET to the cluster secret")
    return secret


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
    connection = PeerConnection(args.host, args.port, secret_from_env(), wait=args.wait)
    try:
        copy = connection.read(args.key)
    finally:
        connection.close()
    if copy is None:
        sys.exit("%s holds no copy of %s" % (connection.server_name, args.key))
    if copy.tombstone:
        sys.exit("%s holds a tombstone for %s" % (connection.server_name, args.key))
    sys.stdout.write(copy.value.decode(errors="replace"))
