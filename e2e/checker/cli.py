"""The checker's command line: one mode a run (load, check, census, peer-read, ring)."""

import argparse
import sys

from . import census, check, load, ring
from .wire import PeerError


def parse_pod(text):
    name, _, address = text.partition("=")
    host, _, port = address.rpartition(":")
    if not name or not host or not port.isdigit():
        raise argparse.ArgumentTypeError("expected NAME=HOST:PORT, got %r" % text)
    return name, host, int(port)


def parse_named_url(text):
    name, _, url = text.partition("=")
    if not name or not url.startswith("http"):
        raise argparse.ArgumentTypeError("expected NAME=URL, got %r" % text)
    return name, url.rstrip("/")


def add_run_limits(mode):
    """The options of a mode that runs until told to stop: load and ring."""
    mode.add_argument("--stop-file", help="stop once this file exists")
    mode.add_argument("--duration", type=float, default=600, help="stop after this many seconds (default 600)")
    mode.add_argument("--timeout", type=float, default=5, help="HTTP timeout in seconds (default 5)")


def parser():
    top = argparse.ArgumentParser(
        prog="checker",
        description="Jepsen-style checker of ringkv writes for e2e/run.sh: load writes and record "
                    "what was acknowledged; check reads them back at a quorum; census counts each "
                    "pod's own copies; ring watches each pod's view of the ring. The cluster secret "
                    "comes from $RINGKV_CLUSTER_SECRET.",
        epilog="More in the package's docstring: python3 -c 'import checker; help(checker)' (in e2e/).")
    modes = top.add_subparsers(dest="mode", required=True, metavar="MODE")

    load_mode = modes.add_parser("load", help="write under load and record what was acknowledged")
    load_mode.add_argument("--url", action="append", required=True,
                      help="client base URL; repeat it to spread the writer threads over several")
    load_mode.add_argument("--record", required=True, help="where to write the record (JSON)")
    load_mode.add_argument("--resume", help="an earlier record to continue (the keys' starting state)")
    load_mode.add_argument("--threads", type=int, default=4, help="writer threads (default 4)")
    load_mode.add_argument("--keys", type=int, default=1000, help="keys in the key space (default 1000)")
    load_mode.add_argument("--prefix", default="scale-", help="key prefix (default scale-)")
    load_mode.add_argument("--replicas", default="2/3", help="replicas=ack/from of every write (default 2/3)")
    load_mode.add_argument("--delete-ratio", type=float, default=0.15, help="share of DELETEs (default 0.15)")
    add_run_limits(load_mode)
    load_mode.add_argument("--quarantine", type=float, default=10,
                      help="seconds a key is left alone after a write without an HTTP answer (default 10)")
    load_mode.add_argument("--min-acked", type=int, default=1, help="fail unless this many writes were acknowledged")
    load_mode.add_argument("--max-unacked", type=int, default=-1,
                           help="fail if more writes than this went unacknowledged (5xx, timeouts; default -1: no limit)")
    load_mode.add_argument("--bucket", type=int, default=10, help="seconds per line of the timeline (default 10)")

    check_mode = modes.add_parser("check", help="read every recorded key back at a quorum and classify it")
    check_mode.add_argument("--url", required=True, help="client base URL to read through")
    check_mode.add_argument("--record", required=True)
    check_mode.add_argument("--replicas", default="2/3", help="replicas=ack/from of the reads (default 2/3)")
    check_mode.add_argument("--threads", type=int, default=4, help="reader threads (default 4)")
    check_mode.add_argument("--retries", type=int, default=5, help="reads of a key before it is an error (default 5)")
    check_mode.add_argument("--timeout", type=float, default=5, help="HTTP timeout in seconds (default 5)")
    check_mode.add_argument("--verbose", action="store_true", help="also list the stale-but-accepted keys")

    census_mode = modes.add_parser("census", help="count the pods holding each recorded key (node-to-node READs)")
    census_mode.add_argument("--record", required=True)
    census_mode.add_argument("--pod", action="append", required=True, type=parse_pod, metavar="NAME=HOST:PORT",
                        help="a pod and where its cluster port is forwarded; once per pod")
    census_mode.add_argument("--rf", type=int, default=0, help="copies each key needs (default min(3, pods))")
    census_mode.add_argument("--settle", type=float, default=60,
                        help="seconds to re-read under-replicated keys before failing (default 60)")
    census_mode.add_argument("--window", type=int, default=64, help="READs open at once per connection (default 64)")
    census_mode.add_argument("--wait", type=float, default=20, help="seconds to wait for a node's greeting (default 20)")

    peer_mode = modes.add_parser("peer-read", help="print one pod's own live value of one key (fails on none)")
    peer_mode.add_argument("--host", default="127.0.0.1")
    peer_mode.add_argument("--port", type=int, required=True, help="the local port forwarded to the pod's cluster port")
    peer_mode.add_argument("--key", required=True)
    peer_mode.add_argument("--wait", type=float, default=20, help="seconds to wait for the node's greeting (default 20)")

    ring_mode = modes.add_parser("ring", help="watch each pod's view of the ring (GET /v0/cluster) against the expected members")
    ring_mode.add_argument("--pod", action="append", required=True, type=parse_named_url, metavar="NAME=URL",
                      help="a pod and a base URL of its public port; once per pod")
    ring_mode.add_argument("--expect", action="append", required=True, metavar="MEMBER",
                      help="a member's name as /v0/cluster lists it; once per member")
    ring_mode.add_argument("--interval", type=float, default=3, help="seconds between rounds (default 3)")
    add_run_limits(ring_mode)
    return top


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        {"load": load.run_load, "check": check.run_check, "census": census.run_census,
         "peer-read": census.run_peer_read, "ring": ring.run_ring}[args.mode](args)
    except PeerError as e:
        sys.exit("%s: %s" % (args.mode, e))
