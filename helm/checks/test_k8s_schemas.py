"""Unit tests of k8s_schemas.py: python3 -m unittest discover -s helm/checks (helm/verify.sh runs them)."""
import unittest

import k8s_schemas

DEFINITIONS = {
    "io.k8s.api.apps.v1.StatefulSet": {
        "x-kubernetes-group-version-kind": [{"group": "apps", "version": "v1", "kind": "StatefulSet"}],
        "properties": {"apiVersion": {"type": "string"}, "spec": {"$ref": "#/definitions/io.k8s.api.apps.v1.Spec"}},
    },
    "io.k8s.api.apps.v1.Spec": {"properties": {
        "replicas": {"type": "integer"},
        "port": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.util.intstr.IntOrString"},
        "memory": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"}}},
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"type": "string", "format": "int-or-string"},
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {"type": "string"},
    "io.k8s.api.core.v1.Unrelated": {"type": "object"},
}


class Schemas(unittest.TestCase):
    def test_files_are_named_as_kubeconform_looks_them_up(self):
        self.assertEqual(k8s_schemas.file_name({"group": "apps", "version": "v1", "kind": "StatefulSet"}),
                         "statefulset-apps-v1.json")
        self.assertEqual(k8s_schemas.file_name({"group": "", "version": "v1", "kind": "Service"}), "service-v1.json")
        self.assertEqual(k8s_schemas.file_name(
            {"group": "monitoring.coreos.com", "version": "v1", "kind": "ServiceMonitor"}),
            "servicemonitor-monitoring-v1.json")

    def test_a_kind_holds_what_it_refers_to_and_nothing_else(self):
        schema = k8s_schemas.standalone(DEFINITIONS, "io.k8s.api.apps.v1.StatefulSet")
        self.assertEqual(schema["$ref"], "#/definitions/io.k8s.api.apps.v1.StatefulSet")
        self.assertNotIn("io.k8s.api.core.v1.Unrelated", schema["definitions"])
        self.assertEqual(len(schema["definitions"]), 4)

    def test_objects_are_strict_fields_nullable_and_yaml_forms_accepted(self):
        defs = k8s_schemas.standalone(DEFINITIONS, "io.k8s.api.apps.v1.StatefulSet")["definitions"]
        spec = defs["io.k8s.api.apps.v1.Spec"]
        self.assertIs(spec["additionalProperties"], False)
        self.assertEqual(spec["properties"]["replicas"]["type"], ["integer", "null"])
        self.assertEqual(defs["io.k8s.apimachinery.pkg.util.intstr.IntOrString"], k8s_schemas.INT_OR_STRING)
        self.assertEqual(defs["io.k8s.apimachinery.pkg.api.resource.Quantity"], k8s_schemas.QUANTITY)

    def test_a_crd_gives_one_schema_per_version(self):
        crd = {"spec": {"group": "monitoring.coreos.com", "names": {"kind": "ServiceMonitor"}, "versions": [
            {"name": "v1", "schema": {"openAPIV3Schema": {"properties": {"spec": {"type": "object"}}}}}]}}
        schemas = k8s_schemas.crd_schemas(crd)
        self.assertEqual(list(schemas), ["servicemonitor-monitoring-v1.json"])
        self.assertIs(schemas["servicemonitor-monitoring-v1.json"]["additionalProperties"], False)


if __name__ == "__main__":
    unittest.main()
