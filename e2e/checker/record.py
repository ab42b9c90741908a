"""The record of a load, and the pure logic over it: which outcomes of a key are accepted (the
last acknowledged write, or an attempt after it without an acknowledgement), how a read or a
pod's own copy classifies against it, and the census's counting."""

import json
import os
import sys

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


def describe(entry):
    """A key's record in words, for the log of a lost or under-replicated key."""
    acked = entry["acked"]
    text = "never acknowledged" if acked is None else (
        "acked PUT %s" % acked["value"] if acked["op"] == "put" else "acked DELETE")
    later = entry["later"]
    if later:
        text += ", then unacked: " + ("... %d more, " % (len(later) - 5) if len(later) > 5 else "") + ", ".join(
            ("PUT %s" % op["value"] if op["op"] == "put" else "DELETE") + " (%s)" % op.get("why") for op in later[-5:])
    return text
