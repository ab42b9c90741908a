"""Unit tests of the helpers the checks stand on: report.py, manifests.py, expect.py."""
import unittest

from . import expect, manifests, report


class Report(unittest.TestCase):
    def test_collect_keeps_the_checks_of_its_run_apart(self):
        def inner():
            report.check("inner", False, "why")

        def outer():
            report.check("outer", True)
            self.assertEqual(report.collect(inner), [(False, "inner", "why")])

        self.assertEqual(report.collect(outer), [(True, "outer", "")])

    def test_a_failure_prints_its_detail_on_one_line(self):
        self.assertEqual(report.lines([(True, "a", ""), (False, "b", "x\ny")]), ["PASS\ta", "FAIL\tb\tx y"])


class Manifests(unittest.TestCase):
    def test_mib_reads_mi_and_gi_only(self):
        self.assertEqual(manifests.mib("768Mi"), 768)
        self.assertEqual(manifests.mib("2Gi"), 2048)
        self.assertIsNone(manifests.mib("512M"))
        self.assertIsNone(manifests.mib(None))

    def test_subset_needs_a_selector_and_every_label(self):
        self.assertTrue(manifests.subset({"a": "1"}, {"a": "1", "b": "2"}))
        self.assertFalse(manifests.subset({"a": "1", "c": "3"}, {"a": "1"}))
        self.assertFalse(manifests.subset({}, {"a": "1"}))

    def test_g_walks_dicts_and_lists(self):
        obj = {"a": [{"b": 1}]}
        self.assertEqual(manifests.g(obj, "a", 0, "b"), 1)
        self.assertEqual(manifests.g(obj, "a", 1, "b", default="none"), "none")

    def test_release_selectors_are_those_of_services_budgets_and_statefulsets(self):
        docs = [{"kind": "Service", "spec": {"selector": {"a": "1"}}},
                {"kind": "PodDisruptionBudget", "spec": {"selector": {"matchLabels": {"b": "2"}}}},
                {"kind": "StatefulSet", "spec": {"selector": {"matchLabels": {"c": "3"}}}},
                {"kind": "Service", "spec": {}}, {"kind": "Job", "spec": {"selector": {"matchLabels": {"d": "4"}}}}]
        self.assertEqual(manifests.release_selectors(docs), [{"a": "1"}, {"b": "2"}, {"c": "3"}])


class Expect(unittest.TestCase):
    def test_overrides_replace_defaults_and_leave_them_alone(self):
        got = expect.expectation(expect.RENDER, '{"replicas": 5, "existingSecret": "s"}')
        self.assertEqual((got["replicas"], got["existingSecret"], got["fullname"]), (5, "s", "ringkv"))
        self.assertEqual(expect.RENDER["replicas"], 3)
        self.assertNotIn("existingSecret", expect.RENDER)


if __name__ == "__main__":
    unittest.main()
