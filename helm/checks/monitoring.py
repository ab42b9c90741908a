#!/usr/bin/env python3
"""Checks of the chart's monitoring objects (metrics.*) in renders made by monitoring.sh.

  monitoring.py off RENDER            none of the objects without their flags
  monitoring.py on RENDER NAMESPACE PERSISTENCE(true|false) REPLICAS [BACKUP(true|false)]
                                      all three flags on: the objects and how they fit together
                                      (BACKUP: backup.schedule set, so RingkvBackupStale too)
  monitoring.py names-test            the metric-name extraction finds what it must

Every query must parse as PromQL and use only metric names the nodes export
(exported-metrics.txt, captured from real nodes; NEWER_THAN_CAPTURE, read from the code that
registers them) or that Prometheus and the kubelet make (FROM_ELSEWHERE). Prints
"PASS<TAB>name" / "FAIL<TAB>name<TAB>detail" lines.
"""
import json
import os
import re
import sys

import promql_parser
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
# `up` is Prometheus's own series per target; kubelet_volume_stats_* measure the data volumes,
# which the nodes' disk_free_bytes does not (it measures their working directory).
FROM_ELSEWHERE = {"up", "kubelet_volume_stats_available_bytes", "kubelet_volume_stats_capacity_bytes"}
# Grafana's variables, replaced by what Grafana puts there before the query can parse.
GRAFANA_VARS = {"$__rate_interval": "1m", "$namespace": "ns", "$job": "job", "$pod": ".*"}
# Metrics the nodes register since exported-metrics.txt was captured: Prometheus name -> (the
# source file, relative to the repository, and the Micrometer name and base unit it must register).
# Move them to exported-metrics.txt with its next capture.
NEWER_THAN_CAPTURE = {
    "ringkv_backup_last_success_seconds":
        ("service/src/main/java/io/ringkv/backup/BackupMetrics.java", 'Gauge.builder("ringkv.backup.last.success"', '.baseUnit("seconds")'),
    "ringkv_replica_reads_total":
        ("service/src/main/java/io/ringkv/replication/Coordinator.java", 'Counter.builder("ringkv.replica.reads")'),
    "ringkv_ring_ranges_zone_shared":
        ("service/src/main/java/io/ringkv/metrics/ZoneMetrics.java", 'Gauge.builder("ringkv.ring.ranges.zone.shared"'),
    "ringkv_zone_members":
        ("service/src/main/java/io/ringkv/metrics/ZoneMetrics.java", 'MultiGauge.builder("ringkv.zone.members")'),
    "ringkv_zone_members_up":
        ("service/src/main/java/io/ringkv/metrics/ZoneMetrics.java", 'MultiGauge.builder("ringkv.zone.members.up")'),
}
MONITORING_KINDS = {("monitoring.coreos.com/v1", "ServiceMonitor"), ("monitoring.coreos.com/v1", "PrometheusRule")}

OUT = []


def check(name, cond, detail=""):
    OUT.append((bool(cond), name, "" if cond else str(detail)))


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def exported():
    with open(os.path.join(HERE, "exported-metrics.txt")) as f:
        return {line.strip() for line in f if line.strip() and not line.startswith("#")} | set(NEWER_THAN_CAPTURE)


def registered(name):
    """Whether the source file NEWER_THAN_CAPTURE names for a metric registers it, with its unit."""
    path, *needles = NEWER_THAN_CAPTURE[name]
    try:
        with open(os.path.join(HERE, "..", "..", path)) as f:
            source = re.sub(r"\s+", "", f.read())
    except OSError:
        return False
    return all(re.sub(r"\s+", "", n) in source for n in needles)


def selectors(expr):
    """Every vector selector of a PromQL expression, as (name, {label: (op, value)})."""
    found = []

    def walk(node):
        if isinstance(node, promql_parser.VectorSelector):
            found.append((node.name, {m.name: (str(m.op), m.value) for m in node.matchers.matchers}))
            return
        for attr in ("lhs", "rhs", "expr", "args", "param", "vector_selector"):
            child = getattr(node, attr, None)
            for c in child if isinstance(child, list) else [child]:
                if c is not None:
                    walk(c)

    walk(promql_parser.parse(expr))
    return found


def metric_names(expr):
    return {name for name, _ in selectors(expr)}


def grafana_to_promql(expr):
    for var, value in GRAFANA_VARS.items():
        expr = expr.replace(var, value)
    return expr


def parse_errors(exprs):
    errors = []
    for expr in exprs:
        try:
            promql_parser.parse(expr)
        except Exception as e:  # the parser raises plain exceptions with the reason
            errors.append(f"{expr}: {e}")
    return errors


def by_kind(docs, kind):
    return [d for d in docs if d.get("kind") == kind]


def off(render):
    docs = load(render)
    kinds = {(d.get("apiVersion"), d.get("kind")) for d in docs}
    check("off: no ServiceMonitor or PrometheusRule", not kinds & MONITORING_KINDS, kinds & MONITORING_KINDS)
    names = {d["metadata"]["name"] for d in docs}
    check("off: no metrics Service, no dashboard ConfigMap",
          not any(n.endswith(("-metrics", "-dashboard")) for n in names), names)


def on(render, namespace, persistence, replicas, backup=False):
    docs = load(render)
    known = exported() | FROM_ELSEWHERE
    sts = by_kind(docs, "StatefulSet")[0]
    pod_labels = sts["spec"]["template"]["metadata"]["labels"]
    container_ports = {p["name"]: p["containerPort"] for p in sts["spec"]["template"]["spec"]["containers"][0]["ports"]}
    services = by_kind(docs, "Service")
    metrics_svc = [s for s in services if s["metadata"]["name"].endswith("-metrics")]
    check("on: one metrics Service", len(metrics_svc) == 1, [s["metadata"]["name"] for s in services])
    svc = metrics_svc[0]
    check("metrics Service selects the ringkv pods",
          svc["spec"]["selector"].items() <= pod_labels.items(), (svc["spec"]["selector"], pod_labels))
    check("metrics Service: headless, not-ready pods published",
          svc["spec"].get("clusterIP") == "None" and svc["spec"].get("publishNotReadyAddresses") is True, svc["spec"])
    svc_ports = {p["name"]: p for p in svc["spec"]["ports"]}
    check("metrics Service port `management` targets the container's management port",
          "management" in svc_ports and svc_ports["management"]["targetPort"] == "management"
          and svc_ports["management"]["port"] == container_ports.get("management"), (svc_ports, container_ports))

    monitors = by_kind(docs, "ServiceMonitor")
    check("on: one ServiceMonitor, monitoring.coreos.com/v1",
          len(monitors) == 1 and monitors[0]["apiVersion"] == "monitoring.coreos.com/v1", monitors)
    sm = monitors[0]
    want = sm["spec"]["selector"]["matchLabels"]
    selected = [s["metadata"]["name"] for s in services if want.items() <= s["metadata"]["labels"].items()]
    check("ServiceMonitor selects the metrics Service and no other", selected == [svc["metadata"]["name"]], selected)
    check("ServiceMonitor looks in the release's namespace",
          sm["spec"]["namespaceSelector"] == {"matchNames": [namespace]}, sm["spec"].get("namespaceSelector"))
    endpoints = sm["spec"]["endpoints"]
    check("ServiceMonitor scrapes /actuator/prometheus on a port the Service has",
          len(endpoints) == 1 and endpoints[0]["port"] in svc_ports and endpoints[0]["path"] == "/actuator/prometheus",
          endpoints)

    rules = by_kind(docs, "PrometheusRule")
    check("on: one PrometheusRule, monitoring.coreos.com/v1",
          len(rules) == 1 and rules[0]["apiVersion"] == "monitoring.coreos.com/v1", rules)
    alerts = {r["alert"]: r for g in rules[0]["spec"]["groups"] for r in g["rules"]}
    expected = {"RingkvNodeDown", "RingkvNodesMissing", "RingkvBreakerOpen", "RingkvNotEnoughReplicas",
                "RingkvPlacementDegraded"}
    if persistence:
        expected.add("RingkvDiskNearlyFull")
    if backup:
        expected.add("RingkvBackupStale")
    check("alerts: " + ", ".join(sorted(expected)), set(alerts) == expected, sorted(alerts))
    errors = parse_errors(r["expr"] for r in alerts.values())
    check("every alert expression parses as PromQL", not errors, errors)
    if not errors:
        unknown = {n for r in alerts.values() for n in metric_names(r["expr"])} - known
        check("alerts use only metric names the nodes export (or up, kubelet_volume_stats_*)", not unknown, unknown)
        job = svc["metadata"]["name"]
        unscoped = [(name, labels) for r in alerts.values() for name, labels in selectors(r["expr"])
                    if labels.get("namespace", (None, None))[1] != namespace
                    or (not name.startswith("kubelet_") and labels.get("job", (None, None))[1] != job)]
        check("every alert selector is scoped to the release (namespace; job = the metrics Service)",
              not unscoped, unscoped)
        check("RingkvNodesMissing compares with replicaCount",
              alerts["RingkvNodesMissing"]["expr"].rstrip().endswith(f"< {replicas}"), alerts["RingkvNodesMissing"]["expr"])
    if persistence and "RingkvDiskNearlyFull" in alerts:
        check("RingkvDiskNearlyFull watches the StatefulSet's data PVCs",
              f'data-{sts["metadata"]["name"]}-[0-9]+' in alerts["RingkvDiskNearlyFull"]["expr"]
              and any(t["metadata"]["name"] == "data" for t in sts["spec"]["volumeClaimTemplates"]),
              alerts["RingkvDiskNearlyFull"]["expr"])

    if "RingkvPlacementDegraded" in alerts and not errors:
        degraded = alerts["RingkvPlacementDegraded"]
        check("RingkvPlacementDegraded fires on ranges sharing a zone, once per release",
              metric_names(degraded["expr"]) == {"ringkv_ring_ranges_zone_shared"}
              and degraded["expr"].startswith("max by (namespace) (") and degraded["expr"].strip().endswith("> 0"),
              degraded["expr"])
        check("RingkvPlacementDegraded points at its runbook (docs/operations.md#ringkvplacementdegraded)",
              degraded.get("annotations", {}).get("runbook") == "docs/operations.md#ringkvplacementdegraded",
              degraded.get("annotations"))

    if backup and "RingkvBackupStale" in alerts and not errors:
        stale = alerts["RingkvBackupStale"]
        check("RingkvBackupStale watches every node's last snapshot, from its start when none since",
              metric_names(stale["expr"]) == {"ringkv_backup_last_success_seconds", "process_start_time_seconds"}
              and re.search(r"> \d+$", stale["expr"].strip()), stale["expr"])
        check("RingkvBackupStale points at its runbook (docs/operations.md#ringkvbackupstale)",
              stale.get("annotations", {}).get("runbook") == "docs/operations.md#ringkvbackupstale", stale.get("annotations"))

    maps = [c for c in by_kind(docs, "ConfigMap") if c["metadata"]["name"].endswith("-dashboard")]
    check("on: one dashboard ConfigMap with the sidecar label",
          len(maps) == 1 and maps[0]["metadata"]["labels"].get("grafana_dashboard") == "1", maps)
    with open(os.path.join(HERE, "..", "ringkv", "dashboards", "ringkv.json")) as f:
        shipped = json.load(f)
    data = maps[0]["data"]
    check("the ConfigMap holds dashboards/ringkv.json as it is",
          list(data) == ["ringkv.json"] and json.loads(data["ringkv.json"]) == shipped, list(data))
    panels = [p for p in shipped["panels"] if p.get("type") != "row"]
    ids = [p["id"] for p in shipped["panels"]]
    check("dashboard panel ids are unique", len(ids) == len(set(ids)), ids)
    panel_exprs = [grafana_to_promql(t["expr"]) for p in panels for t in p["targets"]]
    # label_values(SELECTOR, LABEL): the selector is PromQL.
    variable_exprs = [grafana_to_promql(v["query"]["query"]).removeprefix("label_values(").rsplit(",", 1)[0]
                      for v in shipped["templating"]["list"] if v["type"] == "query"]
    exprs = panel_exprs + variable_exprs
    errors = parse_errors(exprs)
    check("every dashboard query parses as PromQL", not errors, errors)
    if not errors:
        unknown = {n for e in exprs for n in metric_names(e)} - exported()
        check("the dashboard uses only metric names the nodes export", not unknown, unknown)
        used = {n for e in exprs for n in metric_names(e)}
        for family, what in (("ringkv_client_requests_seconds", "requests and latency"),
                             ("ringkv_replica_calls_seconds", "replica calls"),
                             ("ringkv_replica_breaker_state", "breakers"),
                             ("ringkv_storage_", "RocksDB"), ("jvm_memory_used_bytes", "JVM heap"),
                             ("jvm_gc_pause_seconds", "GC"), ("ringkv_hints_", "hints"),
                             ("ringkv_repair_", "repair"), ("ringkv_zone_members_up", "members up per zone"),
                             ("ringkv_replica_reads_total", "replica reads across zones"),
                             ("ringkv_ring_ranges_zone_shared", "ranges sharing a zone")):
            check(f"the dashboard shows {what}", any(n.startswith(family) for n in used), sorted(used))
        unscoped = [e for e in panel_exprs for _, labels in selectors(e)
                    if {"namespace", "job", "pod"} - set(labels)]
        check("every panel query filters by the dashboard's namespace, job and pod", not unscoped, unscoped)


def names_test():
    check("names: selectors inside functions, aggregations and binary operators",
          metric_names('histogram_quantile(0.9, sum by (le) (rate(a_bucket{x="1"}[5m]))) / on() group_left b')
          == {"a_bucket", "b"})
    check("names: vector(0) and time() are no metrics", metric_names("(count(up == 1) or vector(0)) < time()") == {"up"})
    check("names: labels are not metric names", metric_names('max by (peer) (c{peer="p", job="j"})') == {"c"})
    check("names: a query that does not parse is reported", parse_errors(["sum(rate(x[5m])"]) != [])
    for name in NEWER_THAN_CAPTURE:
        check(f"names: {name} is registered by {NEWER_THAN_CAPTURE[name][0]}", registered(name))


def main():
    cmd = sys.argv[1]
    if cmd == "off":
        off(sys.argv[2])
    elif cmd == "on":
        render, namespace, persistence, replicas = sys.argv[2:6]
        on(render, namespace, persistence == "true", int(replicas), sys.argv[6:7] == ["true"])
    else:
        names_test()
    for ok, name, detail in OUT:
        print("PASS\t%s" % name if ok else "FAIL\t%s\t%s" % (name, re.sub(r"\s+", " ", detail)))
    sys.exit(0 if all(ok for ok, _, _ in OUT) else 1)


if __name__ == "__main__":
    main()
