"""check: read every recorded key back at a quorum through one URL and classify each answer."""

import collections
import sys
import threading
import time

from .http_client import HttpClient, InDoubt, NotSent, entity_path
from .record import ERROR_CLASS, LOST, OK, STALE, classify, describe, key_order, load_record

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
