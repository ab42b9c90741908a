"""Unit tests of contract.py: python3 -m unittest discover -s helm/checks (helm/verify.sh runs them).

The render they check is k8s/ringkv.yaml, the chart's default render that k8s/generate commits, with
the namespace a release would have put back."""
import copy
import json
import os
import tempfile
import unittest

import contract

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_EXPECT = {
    "namespace": "default", "fullname": "ringkv", "replicas": 3, "imageTag": "0.1.0",
    "clusterDomain": "cluster.local", "httpPort": 8080, "clusterPort": 7070, "managementPort": 9090,
    "servicePort": 8080, "memoryLimit": "768Mi", "heapMiB": 253, "persistence": True, "size": "1Gi",
    "storageClassName": None, "volumePermissions": False, "networkPolicy": False, "antiAffinity": "soft",
    "spread": True, "tests": False, "departure": "45s",
    "kinds": ["ServiceAccount", "Role", "RoleBinding", "Service", "Service", "StatefulSet",
              "PodDisruptionBudget"],
}


def default_render():
    docs = contract.load(os.path.join(ROOT, "k8s", "ringkv.yaml"))
    for d in docs:
        d["metadata"]["namespace"] = "default"
    return docs


def statefulset(docs):
    return [d for d in docs if d["kind"] == "StatefulSet"][0]


def env(docs, name):
    return [e for e in statefulset(docs)["spec"]["template"]["spec"]["containers"][0]["env"]
            if e["name"] == name][0]


def failed(run):
    contract.OUT = []
    run()
    return [name for ok, name, _ in contract.OUT if not ok]


class Helpers(unittest.TestCase):
    def test_mib_reads_mi_and_gi_only(self):
        self.assertEqual(contract.mib("768Mi"), 768)
        self.assertEqual(contract.mib("2Gi"), 2048)
        self.assertIsNone(contract.mib("512M"))
        self.assertIsNone(contract.mib(None))

    def test_subset_needs_a_selector_and_every_label(self):
        self.assertTrue(contract.subset({"a": "1"}, {"a": "1", "b": "2"}))
        self.assertFalse(contract.subset({"a": "1", "c": "3"}, {"a": "1"}))
        self.assertFalse(contract.subset({}, {"a": "1"}))

    def test_g_walks_dicts_and_lists(self):
        obj = {"a": [{"b": 1}]}
        self.assertEqual(contract.g(obj, "a", 0, "b"), 1)
        self.assertEqual(contract.g(obj, "a", 1, "b", default="none"), "none")


class RenderChecks(unittest.TestCase):
    def test_the_default_render_keeps_the_contract(self):
        self.assertEqual(failed(lambda: contract.render_checks(None, DEFAULT_EXPECT, default_render())), [])

    def test_a_heap_not_derived_from_the_limit_fails(self):
        docs = default_render()
        env(docs, "JAVA_TOOL_OPTIONS")["value"] = "-Xmx600m -XX:MaxDirectMemorySize=61m"
        names = failed(lambda: contract.render_checks(None, DEFAULT_EXPECT, docs))
        for broken in ("-Xmx600m = 253MiB", "heap 600MiB <= 75%", "heap + direct memory <= 80%"):
            self.assertTrue(any(n.startswith(broken) for n in names), names)

    def test_a_second_heap_option_fails(self):
        docs = default_render()
        env(docs, "JAVA_TOOL_OPTIONS")["value"] += " -XX:MaxRAMPercentage=50"
        self.assertIn("no other heap-size option in JAVA_TOOL_OPTIONS",
                      failed(lambda: contract.render_checks(None, DEFAULT_EXPECT, docs)))

    def test_a_client_service_exposing_the_cluster_port_fails(self):
        docs = default_render()
        client = [d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == "ringkv"][0]
        client["spec"]["ports"].append({"name": "cluster", "port": 7070, "targetPort": "cluster"})
        self.assertIn("client Service exposes only http (not the cluster or management port)",
                      failed(lambda: contract.render_checks(None, DEFAULT_EXPECT, docs)))

    def test_the_rbac_checks_have_teeth(self):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
            import yaml
            yaml.safe_dump_all(default_render(), f)
            f.flush()
            self.assertEqual(failed(lambda: contract.rbac_teeth(f.name, copy.deepcopy(DEFAULT_EXPECT))), [])


class Secrets(unittest.TestCase):
    def test_a_secret_generator_a_secret_and_a_literal_are_found(self):
        files = {
            "kustomization.yaml": [{"secretGenerator": [{"name": "x", "literals": ["cluster-secret=x"]}]}],
            "secret.yaml": [{"kind": "Secret", "metadata": {"name": "x"}}],
            "sts.yaml": [{"env": [{"name": "RINGKV_CLUSTER_SECRET", "value": "0123456789abcdef"}]}],
        }
        found = {path for path, _ in contract.secret_findings(files)}
        self.assertEqual(found, set(files))

    def test_a_secret_key_ref_is_no_finding(self):
        files = {"sts.yaml": [{"env": [{"name": "RINGKV_CLUSTER_SECRET",
                                        "valueFrom": {"secretKeyRef": {"name": "x", "key": "cluster-secret"}}}]}]}
        self.assertEqual(contract.secret_findings(files), [])


class Files(unittest.TestCase):
    def write(self, name, text):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def test_schema_coverage_names_an_undescribed_key(self):
        values = self.write("values.yaml", "a: 1\nb:\n  c: 2\n")
        schema = self.write("schema.json", json.dumps({
            "additionalProperties": False,
            "properties": {"a": {}, "b": {"properties": {"d": {}}}}}))
        contract.OUT = []
        contract.schema_coverage(values, schema)
        self.assertIn((False, "values.schema.json describes every key of values.yaml", "['b.c']"), contract.OUT)

    def test_image_heap_follows_the_chart_heap_percent(self):
        values = self.write("values.yaml", "jvm:\n  heapPercent: 33\n")
        same = self.write("Dockerfile.same", 'ENV JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=33.0"\n')
        other = self.write("Dockerfile.other", 'ENV JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=50.0"\n')
        fixed = self.write("Dockerfile.fixed", 'ENV JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=33.0 -Xmx256m"\n')
        self.assertEqual(failed(lambda: contract.image_heap(same, values)), [])
        self.assertEqual(len(failed(lambda: contract.image_heap(other, values))), 1)
        self.assertEqual(len(failed(lambda: contract.image_heap(fixed, values))), 1)


if __name__ == "__main__":
    unittest.main()
