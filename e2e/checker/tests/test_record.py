"""The record's pure logic: how a read classifies (check), and which pods hold a key (census)."""

import json
import unittest

from checker import record
from checker.record import LOST, OK, STALE
from checker.wire import Copy


def put(value):
    return {"op": "put", "value": value}


DELETE = {"op": "delete"}


def entry(acked=None, *later):
    e = record.new_entry()
    if acked is not None:
        record.note_acked(e, acked)
    for op in later:
        record.note_unacked(e, op, "504")
    return e


def value_copy(value, timestamp=1):
    return Copy(False, timestamp, value.encode())


TOMBSTONE = Copy(True, 2, b"")


class ClassifyTest(unittest.TestCase):

    def test_the_last_acknowledged_value_is_ok(self):
        self.assertEqual(OK, record.classify(entry(put("v2")), 200, b"v2"))

    def test_an_acknowledged_delete_reads_404(self):
        self.assertEqual(OK, record.classify(entry(DELETE), 404, b"Not Found"))

    def test_a_key_never_acknowledged_reads_404(self):
        self.assertEqual(OK, record.classify(entry(), 404, b""))

    def test_an_acknowledged_value_missing_is_lost(self):
        self.assertEqual(LOST, record.classify(entry(put("v2")), 404, b""))

    def test_an_older_value_is_lost(self):
        e = entry(put("v1"))
        record.note_acked(e, put("v2"))
        self.assertEqual(LOST, record.classify(e, 200, b"v1"))

    def test_a_value_after_an_acknowledged_delete_is_lost(self):
        e = entry(put("v1"))
        record.note_acked(e, DELETE)
        self.assertEqual(LOST, record.classify(e, 200, b"v1"))

    def test_a_value_never_written_is_lost(self):
        self.assertEqual(LOST, record.classify(entry(put("v1")), 200, b"something else"))

    def test_a_later_unacknowledged_write_is_accepted(self):
        e = entry(put("v1"), put("v2"), put("v3"))
        self.assertEqual(STALE, record.classify(e, 200, b"v2"))
        self.assertEqual(STALE, record.classify(e, 200, b"v3"))
        self.assertEqual(OK, record.classify(e, 200, b"v1"))

    def test_a_later_unacknowledged_delete_accepts_404(self):
        e = entry(put("v1"), DELETE)
        self.assertEqual(STALE, record.classify(e, 404, b""))
        self.assertEqual(OK, record.classify(e, 200, b"v1"))

    def test_an_unacknowledged_write_before_the_last_acknowledgement_is_not_accepted(self):
        e = entry(put("v1"), put("v2"))
        record.note_acked(e, put("v3"))
        self.assertEqual([], e["later"])
        self.assertEqual(LOST, record.classify(e, 200, b"v2"))
        self.assertEqual(OK, record.classify(e, 200, b"v3"))

    def test_an_unacknowledged_write_of_a_key_never_acknowledged(self):
        e = entry(None, put("v1"))
        self.assertEqual(OK, record.classify(e, 404, b""))
        self.assertEqual(STALE, record.classify(e, 200, b"v1"))

    def test_a_5xx_is_an_error(self):
        self.assertEqual(record.ERROR_CLASS, record.classify(entry(put("v1")), 504, b"Not Enough Replicas"))

    def test_the_record_survives_json(self):
        e = entry(put("v1"), DELETE, put("v2"))
        again = json.loads(json.dumps(e))
        self.assertEqual(STALE, record.classify(again, 200, b"v2"))
        self.assertEqual(STALE, record.classify(again, 404, b""))


class CensusTest(unittest.TestCase):

    def test_holds(self):
        self.assertTrue(record.holds(entry(put("v1")), value_copy("v1")))
        self.assertFalse(record.holds(entry(put("v1")), None))
        self.assertFalse(record.holds(entry(put("v1")), TOMBSTONE))
        self.assertFalse(record.holds(entry(put("v2")), value_copy("v1")))
        self.assertTrue(record.holds(entry(DELETE), TOMBSTONE))
        self.assertTrue(record.holds(entry(DELETE), None))
        self.assertFalse(record.holds(entry(DELETE), value_copy("v1")))
        self.assertTrue(record.holds(entry(put("v1"), put("v2")), value_copy("v2")))
        self.assertTrue(record.holds(entry(put("v1"), DELETE), TOMBSTONE))

    def test_the_threshold_is_the_replication_factor(self):
        self.assertEqual(3, record.replication_factor(5))
        self.assertEqual(3, record.replication_factor(3))
        self.assertEqual(2, record.replication_factor(2))
        entries = {"a": entry(put("a1")), "b": entry(put("b1")), "c": entry(DELETE), "d": entry(put("d1"))}
        copies = {
            "p0": {"a": value_copy("a1"), "b": value_copy("b1"), "c": TOMBSTONE, "d": value_copy("d0")},
            "p1": {"a": value_copy("a1"), "b": value_copy("b1"), "c": None, "d": value_copy("d1")},
            "p2": {"a": value_copy("a1"), "b": None, "c": value_copy("c0"), "d": value_copy("d1")},
            "p3": {"a": value_copy("a1"), "b": None, "c": None, "d": None},
            "p4": {"a": value_copy("a1"), "b": value_copy("b0"), "c": None},  # p4 did not answer for d
        }
        counts = record.census_count(entries, copies)
        # a: more copies than RF (old owners keep theirs after a scale-up) is fine.
        self.assertEqual({"a": 5, "b": 2, "c": 4, "d": 2}, counts)
        self.assertEqual(["b", "d"], record.under_replicated(counts, 3))
        self.assertEqual([], record.under_replicated(counts, 2))

    def test_on_three_pods_every_pod_must_hold_every_key(self):
        entries = {"a": entry(put("a1"))}
        copies = {"p0": {"a": value_copy("a1")}, "p1": {"a": value_copy("a1")}, "p2": {"a": None}}
        counts = record.census_count(entries, copies)
        self.assertEqual(["a"], record.under_replicated(counts, record.replication_factor(len(copies))))
