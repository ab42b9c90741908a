"""Unit tests of the checks that read files: secret.py's findings, values_schema.py, memory.image_heap."""
import json
import os
import tempfile
import unittest

from . import memory, secret, values_schema
from .fixtures import failed
from .report import collect


class Secrets(unittest.TestCase):
    def test_a_secret_generator_a_secret_and_a_literal_are_found(self):
        files = {
            "kustomization.yaml": [{"secretGenerator": [{"name": "x", "literals": ["cluster-secret=x"]}]}],
            "secret.yaml": [{"kind": "Secret", "metadata": {"name": "x"}}],
            "sts.yaml": [{"env": [{"name": "RINGKV_CLUSTER_SECRET", "value": "0123456789abcdef"}]}],
        }
        found = {path for path, _ in secret.secret_findings(files)}
        self.assertEqual(found, set(files))

    def test_a_secret_key_ref_is_no_finding(self):
        files = {"sts.yaml": [{"env": [{"name": "RINGKV_CLUSTER_SECRET",
                                        "valueFrom": {"secretKeyRef": {"name": "x", "key": "cluster-secret"}}}]}]}
        self.assertEqual(secret.secret_findings(files), [])


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
        self.assertIn((False, "values.schema.json describes every key of values.yaml", "['b.c']"),
                      collect(values_schema.schema_coverage, values, schema))

    def test_image_heap_follows_the_chart_heap_percent(self):
        values = self.write("values.yaml", "jvm:\n  heapPercent: 33\n")
        same = self.write("Dockerfile.same", 'ENV JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=33.0"\n')
        other = self.write("Dockerfile.other", 'ENV JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=50.0"\n')
        fixed = self.write("Dockerfile.fixed", 'ENV JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=33.0 -Xmx256m"\n')
        self.assertEqual(failed(memory.image_heap, same, values), [])
        self.assertEqual(len(failed(memory.image_heap, other, values)), 1)
        self.assertEqual(len(failed(memory.image_heap, fixed, values)), 1)


if __name__ == "__main__":
    unittest.main()
