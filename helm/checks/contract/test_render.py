"""Unit tests of the render checks (render.py and the concern modules) and of their teeth."""
import unittest

from . import loadtest, netpol, teeth
from .expect import LOADTEST
from .fixtures import K8S_EXPECT, ROOT, default_render, env, failed, k8s_render
from .render import render_checks
from .report import collect


class RenderChecks(unittest.TestCase):
    def test_the_default_render_keeps_the_contract(self):
        self.assertEqual(failed(render_checks, default_render(), K8S_EXPECT), [])

    def test_a_heap_not_derived_from_the_limit_fails(self):
        docs = default_render()
        env(docs, "JAVA_TOOL_OPTIONS")["value"] = "-Xmx600m -XX:MaxDirectMemorySize=61m"
        names = failed(render_checks, docs, K8S_EXPECT)
        for broken in ("-Xmx600m = 253MiB", "heap 600MiB <= 75%", "heap + direct memory <= 80%"):
            self.assertTrue(any(n.startswith(broken) for n in names), names)

    def test_a_second_heap_option_fails(self):
        docs = default_render()
        env(docs, "JAVA_TOOL_OPTIONS")["value"] += " -XX:MaxRAMPercentage=50"
        self.assertIn("no other heap-size option in JAVA_TOOL_OPTIONS", failed(render_checks, docs, K8S_EXPECT))

    def test_a_client_service_exposing_the_cluster_port_fails(self):
        docs = default_render()
        client = [d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == "ringkv"][0]
        client["spec"]["ports"].append({"name": "cluster", "port": 7070, "targetPort": "cluster"})
        self.assertIn("client Service exposes only http (not the cluster or management port)",
                      failed(render_checks, docs, K8S_EXPECT))

    def test_a_render_without_a_statefulset_stops_after_saying_so(self):
        docs = [d for d in default_render() if d["kind"] != "StatefulSet"]
        self.assertEqual(failed(render_checks, docs, K8S_EXPECT)[-1], "exactly one StatefulSet")

    def test_a_cluster_secret_from_another_secret_fails(self):
        names = failed(render_checks, default_render(), {**K8S_EXPECT, "existingSecret": "shared"})
        self.assertIn("the cluster secret as files at /etc/ringkv/cluster from Secret shared: ringkv.cluster.secret "
                      "(key cluster-secret, required), ringkv.cluster.previous-secret (key previous-cluster-secret, "
                      "optional)", names)

    def test_the_cluster_secret_in_an_environment_variable_fails(self):
        docs = default_render()
        sts = [d for d in docs if d["kind"] == "StatefulSet"][0]
        sts["spec"]["template"]["spec"]["containers"][0]["env"].append(
            {"name": "RINGKV_CLUSTER_SECRET", "valueFrom": {"secretKeyRef": {"name": "ringkv-cluster", "key": "cluster-secret"}}})
        self.assertIn("no environment variable holds the cluster secret (RINGKV_CLUSTER_SECRET, _PREVIOUS_SECRET)",
                      failed(render_checks, docs, K8S_EXPECT))

    def test_a_checksum_of_a_secret_in_the_pod_template_fails(self):
        docs = default_render()
        sts = [d for d in docs if d["kind"] == "StatefulSet"][0]
        sts["spec"]["template"]["metadata"]["annotations"] = {"checksum/secret": "0" * 64}
        self.assertIn("no checksum/* annotation on the pod template (no hash of a secret; rotation is two-key)",
                      failed(render_checks, docs, K8S_EXPECT))

    def test_plain_http_probes_with_tls_on_fail(self):
        docs = default_render()
        sts = [d for d in docs if d["kind"] == "StatefulSet"][0]
        sts["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGet"].pop("scheme")
        self.assertIn("readinessProbe: GET /actuator/health/readiness on the management port (9090) over HTTPS",
                      failed(render_checks, docs, K8S_EXPECT))


class NetworkPolicyPorts(unittest.TestCase):
    def test_a_rule_covers_its_ports_a_range_and_without_ports_every_port(self):
        self.assertTrue(netpol.covers({}, "cluster", 7070))
        self.assertTrue(netpol.covers({"ports": [{"port": "cluster"}]}, "cluster", 7070))
        self.assertTrue(netpol.covers({"ports": [{"port": 7000, "endPort": 8000}]}, "cluster", 7070))
        self.assertFalse(netpol.covers({"ports": [{"port": "http"}]}, "cluster", 7070))
        self.assertFalse(netpol.covers({"ports": [{"port": "cluster", "protocol": "UDP"}]}, "cluster", 7070))


class Teeth(unittest.TestCase):
    def test_the_rbac_checks_have_teeth(self):
        results = collect(teeth.rbac_teeth, default_render(), K8S_EXPECT)
        self.assertEqual(len(results), 11)
        self.assertTrue(all(ok for ok, _, _ in results), results)

    def test_a_break_that_no_check_notices_fails(self):
        results = collect(teeth.catches, default_render(), K8S_EXPECT,
                          {"a harmless change": (lambda docs: None, lambda name: True)})
        self.assertEqual([ok for ok, _, _ in results], [False])


class Loadtest(unittest.TestCase):
    def render(self):
        return k8s_render("ringkv.yaml") + k8s_render("loadtest", "loadtest.yaml")

    def test_the_default_loadtest_render_keeps_the_contract(self):
        self.assertEqual(failed(loadtest.loadtest_checks, self.render(), LOADTEST, ROOT + "/loadtest"), [])

    def test_a_script_that_differs_from_loadtest_fails(self):
        docs = self.render()
        [cm] = [d for d in docs if d["kind"] == "ConfigMap" and loadtest.is_loadtest(d)]
        cm["data"]["kv.js"] += "\n// drifted"
        self.assertEqual(failed(loadtest.loadtest_checks, docs, LOADTEST, ROOT + "/loadtest"),
                         ["ConfigMap kv.js is byte-identical to loadtest/kv.js"])

    def pod(self, docs):
        return [d for d in docs if d["kind"] == "Job"][0]["spec"]["template"]["spec"]

    def test_a_report_container_that_is_not_a_sidecar_fails(self):
        docs = self.render()
        del self.pod(docs)["initContainers"][1]["restartPolicy"]  # it would keep the pod from starting k6
        self.assertEqual(failed(loadtest.loadtest_checks, docs, LOADTEST, ROOT + "/loadtest"),
                         ["one report container, the first init container after the wait, restartPolicy Always "
                          "(a native sidecar)"])

    def test_a_k6_pod_that_does_not_wait_for_the_release_fails(self):
        docs = self.render()
        del self.pod(docs)["initContainers"][0]
        self.assertIn("the first init container is wait-for-release (nothing starts before the release answers)",
                      failed(loadtest.loadtest_checks, docs, LOADTEST, ROOT + "/loadtest"))

    def test_a_report_the_sidecar_cannot_read_fails(self):
        docs = self.render()
        k6 = self.pod(docs)["containers"][0]
        [export] = [e for e in k6["env"] if e["name"] == "K6_WEB_DASHBOARD_EXPORT"]
        export["value"] = "/tmp/report.html.gz"
        self.assertEqual(failed(loadtest.loadtest_checks, docs, LOADTEST, ROOT + "/loadtest"),
                         ["the export is on an emptyDir that k6 writes and the report container mounts read-only at the same path",
                          "the report container prints the export base64-encoded when stopped (trap on TERM)"])


if __name__ == "__main__":
    unittest.main()
