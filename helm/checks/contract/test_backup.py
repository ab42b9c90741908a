"""Unit tests of backup.py: what the NetworkPolicy admits, the nodes' URLs, and the default render."""
import unittest

from . import backup
from .fixtures import default_render, failed

LABELS = {"app.kubernetes.io/name": "ringkv-backup", "app.kubernetes.io/instance": "ringkv"}


def policy(*rules):
    return [{"kind": "NetworkPolicy", "spec": {"ingress": list(rules)}}]


class Admitted(unittest.TestCase):
    def test_a_rule_without_from_admits_everyone_on_its_ports(self):
        self.assertTrue(backup.admitted(policy({"ports": [{"port": "management"}]}), LABELS, "management", 9090))
        self.assertFalse(backup.admitted(policy({"ports": [{"port": "http"}]}), LABELS, "management", 9090))

    def test_a_pod_selector_admits_the_pods_it_selects_in_the_namespace_only(self):
        mine = {"podSelector": {"matchLabels": LABELS}}
        prometheus = {"podSelector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}}}
        other_namespaces = {"namespaceSelector": {}, "podSelector": {"matchLabels": LABELS}}
        rule = {"ports": [{"port": "management"}]}
        self.assertTrue(backup.admitted(policy({**rule, "from": [prometheus, mine]}), LABELS, "management", 9090))
        self.assertFalse(backup.admitted(policy({**rule, "from": [prometheus]}), LABELS, "management", 9090))
        self.assertFalse(backup.admitted(policy({**rule, "from": [other_namespaces]}), LABELS, "management", 9090))
        self.assertTrue(backup.admitted(policy({**rule, "from": [{"podSelector": {}}]}), LABELS, "management", 9090))


class NodeUrls(unittest.TestCase):
    def test_every_pod_by_the_headless_service(self):
        sts = {"metadata": {"name": "kv"}, "spec": {"replicas": 2, "serviceName": "kv-headless"}}
        exp = {**backup.DEFAULT, "namespace": "ns", "clusterDomain": "corp.internal", "tls": False}
        self.assertEqual(backup.node_urls(sts, exp, 9090),
                         ["http://kv-0.kv-headless.ns.svc.corp.internal:9090", "http://kv-1.kv-headless.ns.svc.corp.internal:9090"])


class DefaultRender(unittest.TestCase):
    def test_the_default_render_has_no_backup_setting_cronjob_or_restore_job(self):
        self.assertEqual(failed(backup.backup_checks, default_render(), backup.DEFAULT), [])

    def test_a_cronjob_without_a_schedule_fails(self):
        docs = default_render() + [{"kind": "CronJob", "metadata": {"name": "x", "labels": {"app.kubernetes.io/component": "backup"}}}]
        self.assertEqual(failed(backup.backup_checks, docs, backup.DEFAULT),
                         ["no backup.schedule: no CronJob and no backup ConfigMap"])

    def test_backup_settings_without_a_target_fail(self):
        docs = default_render()
        [sts] = [d for d in docs if d["kind"] == "StatefulSet"]
        sts["spec"]["template"]["spec"]["containers"][0]["env"].append({"name": "RINGKV_BACKUP_TARGET", "value": "file:///b"})
        self.assertEqual(failed(backup.backup_checks, docs, backup.DEFAULT),
                         ["no backup.target: no RINGKV_BACKUP_* or AWS_* in the nodes' env"])


if __name__ == "__main__":
    unittest.main()
