"""The NetworkPolicy (networkPolicy.enabled): the http port open between the ringkv pods (and to what
the values add), the management port open, the node-to-node cluster port open to the release's own
ringkv pods and nobody else."""
from .manifests import g, subset
from .report import check


def covers(rule, port_name, port_num):
    """Whether an ingress rule applies to the port; one without ports (or a port entry without a port)
    applies to every port."""
    entries = rule.get("ports") or []
    if not entries:
        return True
    for p in entries:
        if p.get("protocol", "TCP") != "TCP":
            continue
        port = p.get("port")
        if port is None or port in (port_name, port_num):
            return True
        if isinstance(port, int) and isinstance(p.get("endPort"), int) and port <= port_num <= p["endPort"]:
            return True
    return False


def check_network_policy(r):
    exp, pod_labels = r.exp, r.pod_labels
    nps = r.kinds("NetworkPolicy")
    if not exp["networkPolicy"]:
        check("no NetworkPolicy (off by default)", not nps, nps)
        return
    np_ = nps[0] if len(nps) == 1 else {}
    ingress = g(np_, "spec", "ingress") or []

    def allows(port_name, port_num):
        return [rule for rule in ingress if any(p.get("port") in (port_name, port_num) for p in rule.get("ports", []))]

    sts_selector = g(r.spec, "selector", "matchLabels") or {}

    def release_pods_only(peer):
        # A podSelector alone (same namespace) that requires every selector label of the StatefulSet.
        return set(peer) == {"podSelector"} and subset(sts_selector, g(peer, "podSelector", "matchLabels") or {})

    http_rules = allows("http", exp["httpPort"])
    check("NetworkPolicy selects the ringkv pods",
          subset(g(np_, "spec", "podSelector", "matchLabels"), pod_labels), np_)
    check("NetworkPolicy restricts Ingress", "Ingress" in (g(np_, "spec", "policyTypes") or ["Ingress"]),
          g(np_, "spec", "policyTypes"))
    check("NetworkPolicy allows the http port between ringkv pods",
          any(subset(g(peer, "podSelector", "matchLabels"), pod_labels)
              for rule in http_rules for peer in rule.get("from", [])), http_rules)
    cluster_rules = [rule for rule in ingress if covers(rule, "cluster", exp["clusterPort"])]
    check("NetworkPolicy allows the cluster port (%d) between ringkv pods" % exp["clusterPort"],
          any(release_pods_only(peer) for rule in cluster_rules for peer in rule.get("from") or []), cluster_rules)
    check("NetworkPolicy allows the cluster port only from the release's ringkv pods "
          "(not the namespace, test/loadtest pods, extraIngressFrom, other namespaces or IP blocks)",
          all(rule.get("from") and all(release_pods_only(peer) for peer in rule["from"]) for rule in cluster_rules),
          cluster_rules)
    mgmt_rules = [rule for rule in ingress if covers(rule, "management", exp["managementPort"])]
    check("NetworkPolicy allows the management port", allows("management", exp["managementPort"]), ingress)
    if not exp["managementOpen"]:
        check("NetworkPolicy admits the management port only from listed peers (networkPolicy.managementFrom), "
              "not from anywhere", mgmt_rules and all(rule.get("from") for rule in mgmt_rules), mgmt_rules)
