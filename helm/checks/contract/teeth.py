"""Checks with teeth: the NetworkPolicy and RBAC checks must fail on copies of a good render broken in
each way that matters, or they would prove nothing."""
import copy

from .render import render_checks
from .report import check, collect, failed_names


def catches(good, exp, broken):
    """broken: {check name: (mutate, failure)}. Each check passes when render_checks, run on a copy of the
    documents good that mutate(docs) broke, fails a check whose name failure(name) recognises."""
    for name, (mutate, failure) in broken.items():
        docs = copy.deepcopy(good)
        mutate(docs)
        failed = failed_names(collect(render_checks, docs, exp))
        check(name, any(failure(n) for n in failed), failed)


def np_teeth(docs, exp):
    """The NetworkPolicy checks must fail on copies of a good render whose policy lets others reach the
    cluster port, or shuts the ringkv pods out of it: otherwise they would prove nothing."""

    def cluster_rule(np_):
        return [r for r in np_["spec"]["ingress"] if any(p.get("port") == "cluster" for p in r.get("ports", []))][0]

    def plus_namespace(np_):
        cluster_rule(np_)["from"].append({"podSelector": {}})

    def plus_other_namespace(np_):
        cluster_rule(np_)["from"].append({"namespaceSelector": {}, "podSelector": dict(np_["spec"]["podSelector"])})

    def plus_ip_block(np_):
        np_["spec"]["ingress"].append({"ports": [{"port": exp["clusterPort"], "protocol": "TCP"}],
                                       "from": [{"ipBlock": {"cidr": "10.0.0.0/8"}}]})

    def plus_any_port_rule(np_):
        np_["spec"]["ingress"].append({"from": [{"podSelector": {}}]})

    def open_to_all(np_):
        cluster_rule(np_).pop("from")

    def only_test_pod(np_):
        cluster_rule(np_)["from"] = [{"podSelector": {"matchLabels": {"app.kubernetes.io/name": "ringkv-test"}}}]

    def without_rule(np_):
        np_["spec"]["ingress"].remove(cluster_rule(np_))

    broken = {
        "the namespace (podSelector {})": (plus_namespace, "only from"),
        "the same pod labels in any namespace": (plus_other_namespace, "only from"),
        "an ipBlock on port %d" % exp["clusterPort"]: (plus_ip_block, "only from"),
        "a rule without ports from the namespace": (plus_any_port_rule, "only from"),
        "everyone (a rule without from)": (open_to_all, "only from"),
        "the test pod instead of the ringkv pods": (only_test_pod, "between ringkv pods"),
        "nobody (no cluster-port rule)": (without_rule, "between ringkv pods"),
    }
    catches(docs, exp, {"the NetworkPolicy checks catch a cluster port open to %s" % what:
                        (lambda docs, m=mutate: m([d for d in docs if d.get("kind") == "NetworkPolicy"][0]),
                         lambda n, e=expect: "cluster port" in n and e in n)
                        for what, (mutate, expect) in broken.items()})


def rbac_teeth(docs, exp):
    """The RBAC checks must fail on copies of a good render (departure on) whose Role grants more than `get`
    on the one StatefulSet (any right on Secrets among them), or whose RoleBinding names someone else:
    otherwise they would prove nothing."""

    def first(docs, kind):
        return [d for d in docs if d.get("kind") == kind][0]

    def rule(docs, i=0):
        return first(docs, "Role")["rules"][i]

    def plus_list(docs):
        rule(docs)["verbs"].append("list")

    def all_verbs(docs):
        rule(docs)["verbs"] = ["*"]

    def any_statefulset(docs):
        rule(docs).pop("resourceNames")

    def another_statefulset(docs):
        rule(docs)["resourceNames"].append("other")

    def any_group(docs):
        rule(docs)["apiGroups"] = ["*"]

    def plus_secrets(docs):
        first(docs, "Role")["rules"].append({"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]})

    def plus_scale(docs):
        rule(docs)["resources"].append("statefulsets/scale")

    def create_secrets(docs):
        first(docs, "Role")["rules"].append({"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]})

    def default_account(docs):
        first(docs, "RoleBinding")["subjects"][0]["name"] = "default"

    def other_namespace(docs):
        first(docs, "RoleBinding")["subjects"][0]["namespace"] = "elsewhere"

    def no_token(docs):
        first(docs, "StatefulSet")["spec"]["template"]["spec"]["automountServiceAccountToken"] = False

    broken = {
        "a Role that also lists StatefulSets": (plus_list, "Role grants only"),
        "a Role with every verb": (all_verbs, "Role grants only"),
        "a Role on every StatefulSet (no resourceNames)": (any_statefulset, "Role grants only"),
        "a Role on a second StatefulSet too": (another_statefulset, "Role grants only"),
        "a Role on every API group": (any_group, "Role grants only"),
        "a Role that also reads every Secret": (plus_secrets, "Role grants only"),
        "a Role on statefulsets/scale too": (plus_scale, "Role grants only"),
        "a Role that may create Secrets (the chart makes them; the pods need not)": (create_secrets, "Role grants only"),
        "a RoleBinding to the namespace's default ServiceAccount": (default_account, "only subject"),
        "a RoleBinding to a ServiceAccount of another namespace": (other_namespace, "only subject"),
        "pods without the token": (no_token, "automountServiceAccountToken true"),
    }
    if exp.get("nodeZone", True):
        broken.update(node_reader_breaks(first))
    catches(docs, exp, {"the RBAC checks catch %s" % what:
                        (mutate, lambda n, e=expect: n.startswith("rbac:") and e in n)
                        for what, (mutate, expect) in broken.items()})


def node_reader_breaks(first):
    """Copies of a render with zones from the Node label whose ClusterRole grants more than `get` on
    nodes, or whose ClusterRoleBinding names someone else, each with the check that must catch it."""

    def rule(docs):
        return first(docs, "ClusterRole")["rules"][0]

    def subject(docs):
        return first(docs, "ClusterRoleBinding")["subjects"][0]

    def plus_list(docs):
        rule(docs)["verbs"].append("list")

    def plus_watch(docs):
        rule(docs)["verbs"].append("watch")

    def plus_proxy(docs):
        rule(docs)["resources"].append("nodes/proxy")

    def plus_pods(docs):
        rule(docs)["resources"].append("pods")

    def any_group(docs):
        rule(docs)["apiGroups"] = ["*"]

    def plus_secrets(docs):
        first(docs, "ClusterRole")["rules"].append({"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]})

    def to_group(docs):
        first(docs, "ClusterRoleBinding")["subjects"].append(
            {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:serviceaccounts"})

    def default_account(docs):
        subject(docs)["name"] = "default"

    def other_namespace(docs):
        subject(docs)["namespace"] = "elsewhere"

    def shared_name(docs):
        for kind in ("ClusterRole", "ClusterRoleBinding"):
            first(docs, kind)["metadata"]["name"] = "ringkv-node-reader"
        first(docs, "ClusterRoleBinding")["roleRef"]["name"] = "ringkv-node-reader"

    return {
        "a ClusterRole that also lists nodes": (plus_list, "ClusterRole grants only"),
        "a ClusterRole that also watches nodes": (plus_watch, "ClusterRole grants only"),
        "a ClusterRole on nodes/proxy too": (plus_proxy, "ClusterRole grants only"),
        "a ClusterRole on pods too": (plus_pods, "ClusterRole grants only"),
        "a ClusterRole on every API group": (any_group, "ClusterRole grants only"),
        "a ClusterRole that also reads every Secret": (plus_secrets, "ClusterRole grants only"),
        "a ClusterRoleBinding to every ServiceAccount too": (to_group, "ClusterRoleBinding's only subject"),
        "a ClusterRoleBinding to the namespace's default ServiceAccount": (default_account, "ClusterRoleBinding's only subject"),
        "a ClusterRoleBinding to a ServiceAccount of another namespace": (other_namespace, "ClusterRoleBinding's only subject"),
        "a ClusterRole named without the namespace": (shared_name, "both named"),
    }
