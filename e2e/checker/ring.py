"""ring: watch each pod's view of the ring (GET /v0/cluster) against the expected members."""

import collections
import json
import os
import sys
import time
import urllib.parse

from .http_client import HttpClient, InDoubt, NotSent


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
