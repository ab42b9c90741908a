"""A Jepsen-style checker of ringkv's writes, for the end-to-end test (e2e/run.sh).

Python 3.11, standard library only. Run as `python3 e2e/checker MODE ...` (or, in e2e/,
`python3 -m checker MODE ...`); its tests: `python3 -m unittest discover -s e2e`. One module a
concern: record (the record and its pure logic), wire (the node-to-node protocol), http_client,
one module a mode (load, check, census with peer-read, ring), cli (the options). Modes:

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
