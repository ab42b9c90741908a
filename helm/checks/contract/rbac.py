"""The pods' ServiceAccount and the RBAC of the nodes' Kubernetes API calls: each discovery round a
node reads its own StatefulSet's spec.replicas for the ring's members (cluster.membershipFromStatefulSet),
and on SIGTERM to know whether a scale-down removes it (cluster.departure). The Role grants that and
nothing more (no right on Secrets: the kubelet mounts them), also in k8s/ under an overlay. At start a
node reads its Node's zone label (cluster.zones.fromNodeLabel): a ClusterRole grants `get` on nodes and
nothing more, to the pods' ServiceAccount alone, under a name of the namespace and release."""
import base64
import json

from .manifests import g, load, of_kind, subset
from .report import check


def check_service_account(r):
    sas = {d["metadata"]["name"]: d for d in r.kinds("ServiceAccount")}
    sa = sas.get(r.pod.get("serviceAccountName"))
    check("pod uses the rendered ServiceAccount", sa is not None, (r.pod.get("serviceAccountName"), list(sas)))
    automount = r.exp.get("serviceAccountAutomount", False)
    check("ServiceAccount: automountServiceAccountToken %s (serviceAccount.automount)" % json.dumps(automount),
          sa is not None and sa.get("automountServiceAccountToken") is automount,
          sa and sa.get("automountServiceAccountToken"))


def wanted_rules(r):
    """The Role's rules the render needs, each with what it grants in words, and why (the features)."""
    exp, sts_name = r.exp, r.sts["metadata"]["name"]
    membership = exp.get("membership", True)
    rules, granted = [], []
    if exp["departure"] or membership:
        rules.append({"apiGroups": ["apps"], "resources": ["statefulsets"], "resourceNames": [sts_name],
                      "verbs": ["get"]})
        granted.append("get on statefulsets/%s (apps)" % sts_name)
    why = " and ".join(w for w, on in (("membership", membership), ("departure", exp["departure"])) if on)
    return rules, granted, why


def check_api_access(r):
    exp, pod = r.exp, r.pod
    roles, bindings = r.kinds("Role"), r.kinds("RoleBinding")
    want_rules, granted, why = wanted_rules(r)
    if exp.get("nodeZone", True):
        why = " and ".join(w for w in (why, "zones from the Node label") if w)
    if not why:
        automount = exp.get("serviceAccountAutomount", False)
        check("rbac: pod automountServiceAccountToken = serviceAccount.automount (%s)" % json.dumps(automount),
              pod.get("automountServiceAccountToken") is automount, pod.get("automountServiceAccountToken"))
    else:
        check("rbac: pod automountServiceAccountToken true (%s: the node calls the Kubernetes API)" % why,
              pod.get("automountServiceAccountToken") is True, pod.get("automountServiceAccountToken"))
    check_node_reader(r)
    if not want_rules:
        check("rbac: no Role and no RoleBinding (membership and departure off)", not roles and not bindings,
              [(d["kind"], d["metadata"]["name"]) for d in roles + bindings])
        return
    check("rbac: exactly one Role and one RoleBinding", len(roles) == 1 and len(bindings) == 1,
          [(d["kind"], d["metadata"]["name"]) for d in roles + bindings])
    role = roles[0] if len(roles) == 1 else {}
    check("rbac: Role grants only %s, nothing else" % "; ".join(granted),
          role.get("rules") == want_rules, role.get("rules"))
    rb = bindings[0] if len(bindings) == 1 else {}
    check("rbac: RoleBinding refers to that Role",
          rb.get("roleRef") == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": g(role, "metadata", "name")}
          and role, rb.get("roleRef"))
    subjects = rb.get("subjects") or []
    rb_ns = g(rb, "metadata", "namespace")
    check("rbac: RoleBinding's only subject is the pods' ServiceAccount %s/%s"
          % (exp["namespace"], pod.get("serviceAccountName")),
          len(subjects) == 1 and subjects[0].get("kind") == "ServiceAccount" and not subjects[0].get("apiGroup")
          and subjects[0].get("name") == pod.get("serviceAccountName")
          and subjects[0].get("namespace", rb_ns) == exp["namespace"], subjects)
    check("rbac: Role and RoleBinding carry the release's selector labels",
          role and rb and all(subset(g(r.spec, "selector", "matchLabels"), g(d, "metadata", "labels") or {})
                              for d in (role, rb)))


def rbac_namespace(path, namespace, secret_file):
    """k8s/ built under an overlay with its own namespace and Secrets (k8s/kustomization.yaml): the
    RoleBinding follows the namespace, the Role still names the StatefulSet alone, and the cluster
    secret comes from the overlay's Secret (kustomize writes its hashed name into the references)."""
    docs = load(path)
    sas, roles, rbs = of_kind(docs, "ServiceAccount"), of_kind(docs, "Role"), of_kind(docs, "RoleBinding")
    stss, secrets = of_kind(docs, "StatefulSet"), of_kind(docs, "Secret")
    cluster = [s for s in secrets if "cluster-secret" in (s.get("data") or {})]
    if len(stss) == len(roles) == len(cluster) == 1:
        sts_name = stss[0]["metadata"]["name"]
        check("overlay: the Role still grants get on statefulsets/%s only" % sts_name,
              roles[0].get("rules") == [{"apiGroups": ["apps"], "resources": ["statefulsets"],
                                         "resourceNames": [sts_name], "verbs": ["get"]}],
              roles[0].get("rules"))
        volumes = g(stss[0], "spec", "template", "spec", "volumes", default=[])
        ref = sorted({g(src, "secret", "name") for v in volumes if v.get("name") == "cluster-secret"
                      for src in g(v, "projected", "sources", default=[])})
        with open(secret_file, "rb") as f:
            want = f.read()
        check("overlay: the cluster secret's files come from the overlay's Secret (%s), holding its file"
              % cluster[0]["metadata"]["name"],
              ref == [cluster[0]["metadata"]["name"]]
              and base64.b64decode(g(cluster[0], "data", "cluster-secret", default="")) == want, ref)
        mounted = {g(v, "secret", "secretName") for v in volumes if "secret" in v}
        names = {s["metadata"]["name"] for s in secrets}
        check("overlay: the tokens and TLS volumes name the overlay's Secrets", len(mounted) == 2 and mounted <= names,
              (mounted, names))
    else:
        check("overlay: one StatefulSet, Role and cluster Secret", False, [(d["kind"], d["metadata"]["name"]) for d in docs])
    check("overlay: ServiceAccount, Role and RoleBinding in namespace %s" % namespace,
          len(sas) == len(roles) == len(rbs) == 1
          and all(g(d, "metadata", "namespace") == namespace for d in sas + roles + rbs),
          [(d["kind"], g(d, "metadata", "namespace")) for d in sas + roles + rbs])
    if len(sas) == len(rbs) == 1:
        subjects = rbs[0].get("subjects") or []
        check("overlay: the RoleBinding's subject is the ServiceAccount %s/%s (no namespace = the binding's own)"
              % (namespace, sas[0]["metadata"]["name"]),
              len(subjects) == 1 and subjects[0].get("name") == sas[0]["metadata"]["name"]
              and subjects[0].get("namespace", g(rbs[0], "metadata", "namespace")) == namespace, subjects)


NODE_READER_RULES = [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}]


def check_node_reader(r):
    """With zones from the Node label, one ClusterRole that may only get nodes, bound to the pods'
    ServiceAccount alone, both named <namespace>-<fullname>-node-reader (cluster-scoped: two releases of
    one name in two namespaces must not share them), and the node told its Node's name; otherwise
    neither, and no RINGKV_CLUSTER_ZONE_FROM_NODE. Zones by ordinal go to the node as given."""
    exp, pod = r.exp, r.pod
    roles, bindings = r.kinds("ClusterRole"), r.kinds("ClusterRoleBinding")
    by_ordinal = exp.get("zonesByOrdinal")
    check("zones: RINGKV_CLUSTER_ZONES_BY_ORDINAL = %s" % json.dumps(by_ordinal),
          r.val("RINGKV_CLUSTER_ZONES_BY_ORDINAL") == by_ordinal, r.val("RINGKV_CLUSTER_ZONES_BY_ORDINAL"))
    if not exp.get("nodeZone", True):
        check("rbac: no ClusterRole and no ClusterRoleBinding (zones not from the Node label)", not roles and not bindings,
              [(d["kind"], d["metadata"]["name"]) for d in roles + bindings])
        check("zones: no RINGKV_CLUSTER_ZONE_FROM_NODE, no NODE_NAME",
              not {"RINGKV_CLUSTER_ZONE_FROM_NODE", "NODE_NAME"} & set(r.env_names), r.env_names)
        return
    name = "%s-%s-node-reader" % (exp["namespace"], r.sts["metadata"]["name"])
    check("rbac: exactly one ClusterRole and one ClusterRoleBinding, both named %s" % name,
          len(roles) == 1 and len(bindings) == 1 and all(d["metadata"]["name"] == name for d in roles + bindings),
          [(d["kind"], d["metadata"]["name"]) for d in roles + bindings])
    role = roles[0] if len(roles) == 1 else {}
    check("rbac: ClusterRole grants only get on nodes, nothing else", role.get("rules") == NODE_READER_RULES,
          role.get("rules"))
    crb = bindings[0] if len(bindings) == 1 else {}
    check("rbac: ClusterRoleBinding refers to that ClusterRole",
          crb.get("roleRef") == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                 "name": g(role, "metadata", "name")} and role, crb.get("roleRef"))
    subjects = crb.get("subjects") or []
    check("rbac: ClusterRoleBinding's only subject is the pods' ServiceAccount %s/%s (namespace given)"
          % (exp["namespace"], pod.get("serviceAccountName")),
          len(subjects) == 1 and subjects[0].get("kind") == "ServiceAccount" and not subjects[0].get("apiGroup")
          and subjects[0].get("name") == pod.get("serviceAccountName")
          and subjects[0].get("namespace") == exp["namespace"], subjects)
    check("rbac: ClusterRole and ClusterRoleBinding carry the release's selector labels",
          role and crb and all(subset(g(r.spec, "selector", "matchLabels"), g(d, "metadata", "labels") or {})
                               for d in (role, crb)))
    node_name = g(r.env, "NODE_NAME", "valueFrom", "fieldRef", "fieldPath")
    # $(NODE_NAME) is expanded only from a variable defined before it.
    check("zones: NODE_NAME from the downward API's spec.nodeName, before RINGKV_CLUSTER_ZONE_FROM_NODE = $(NODE_NAME)",
          node_name == "spec.nodeName" and r.val("RINGKV_CLUSTER_ZONE_FROM_NODE") == "$(NODE_NAME)"
          and "NODE_NAME" in r.env_names and "RINGKV_CLUSTER_ZONE_FROM_NODE" in r.env_names
          and r.env_names.index("NODE_NAME") < r.env_names.index("RINGKV_CLUSTER_ZONE_FROM_NODE"),
          (node_name, r.val("RINGKV_CLUSTER_ZONE_FROM_NODE")))
