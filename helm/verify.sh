#!/usr/bin/env bash
# Lints and renders the ringkv Helm chart (helm/ringkv) for default and
# non-default values, checks the rendered objects against the application
# contract (ports: http, the node-to-node cluster port, management; the cluster
# secret from cluster.existingSecret, from cluster.secret, or by default made by
# the first node, with no secret in any render and every render identical; the
# NetworkPolicy), checks that the values schema and the templates reject bad
# values, checks that nothing refers to the removed HTTP internal endpoints
# (/internal/..., X-Ringkv-Cluster-Secret), checks the RBAC of the nodes'
# Kubernetes API calls (a Role with `get` on the release's own StatefulSet for
# cluster.departure, `get` on the generated Secret and `create` on Secrets for
# the generated secret, nothing else, bound to the pods' ServiceAccount, the
# token mounted, the env vars; none of it when neither is on; the departure
# timeout kept 10s below the grace period),
# checks the k6 loadtest Job and its scripts (byte-identical to loadtest/, also
# in the packaged chart), and (when kubectl is available) checks that the
# kustomize base in k8s/ and k8s/loadtest match the chart's renders and that
# no file in k8s/ holds a secret.
#
# Usage: helm/verify.sh
#   HELM=/path/to/helm   helm binary (default: `helm` from PATH)
#   PYTHON=python3       python with PyYAML (installed with pip when missing)
#   KUBECTL=kubectl      kubectl for `kubectl kustomize` (skipped when absent)
#
# Prints one line per check and a summary; exits non-zero if any check failed.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
CHART="$HERE/ringkv"
K8S_DIR="$ROOT/k8s"

HELM="${HELM:-$(command -v helm || true)}"
if [ -z "$HELM" ] || ! "$HELM" version >/dev/null 2>&1; then
  echo "ERROR: helm not found. Put it on PATH or set HELM=/path/to/helm, e.g.:" >&2
  echo "  GOFLAGS=-mod=mod go install helm.sh/helm/v3/cmd/helm@v3.22.0 && HELM=\$(go env GOPATH)/bin/helm $0" >&2
  exit 2
fi
PYTHON="${PYTHON:-python3}"
command -v "$PYTHON" >/dev/null 2>&1 || { echo "ERROR: $PYTHON not found" >&2; exit 2; }
if ! "$PYTHON" -c 'import yaml' >/dev/null 2>&1; then
  echo "PyYAML missing: installing it with pip"
  "$PYTHON" -m pip install --quiet pyyaml || "$PYTHON" -m pip install --quiet --user pyyaml
  "$PYTHON" -c 'import yaml' || { echo "ERROR: could not install PyYAML" >&2; exit 2; }
fi
KUBECTL="${KUBECTL:-$(command -v kubectl || true)}"

WORK="$(mktemp -d)"
MOCK_PID=""
cleanup() {
  if [ -n "$MOCK_PID" ]; then kill "$MOCK_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

PASSED=0
FAILED=0
SKIPPED=0
FAILED_NAMES=()
pass() { PASSED=$((PASSED + 1)); printf '  PASS  %s\n' "$1"; }
fail() {
  FAILED=$((FAILED + 1)); FAILED_NAMES+=("$1"); printf '  FAIL  %s\n' "$1"
  if [ -n "${2:-}" ] && [ -s "$2" ]; then head -n 25 "$2" | sed 's/^/          | /'; fi
}
skip() { SKIPPED=$((SKIPPED + 1)); printf '  SKIP  %s\n' "$1"; }
section() { printf '\n== %s\n' "$*"; }

# ---------------------------------------------------------------------------
# The checker: python3 + PyYAML.
#   check.py render FILE EXPECT_JSON   contract checks of one render
#   check.py np-teeth FILE EXPECT_JSON  the NetworkPolicy checks fail on broken copies of a render
#   check.py rbac-teeth FILE EXPECT_JSON  the RBAC checks fail on broken copies of a render
#   check.py rbac-namespace FILE NAMESPACE SECRET_FILE  the base's Role/RoleBinding under an overlay with its own secret
#   check.py k8s-no-secret DIR   no Secret, secretGenerator or secret literal in the files of DIR
#   check.py compare HELM.yaml KUSTOMIZE.yaml
#   check.py schema-coverage VALUES.yaml SCHEMA.json
#   check.py loadtest FILE EXPECT_JSON LOADTEST_DIR   the loadtest Job/ConfigMap of one render
#   check.py compare-loadtest HELM.yaml KUSTOMIZE.yaml
#   check.py jobname FILE                            prints the loadtest Job's name (or nothing)
# Prints "PASS<TAB>name" / "FAIL<TAB>name<TAB>detail" lines.
# ---------------------------------------------------------------------------
cat >"$WORK/check.py" <<'PY'
import base64
import hashlib
import json
import re
import sys

import yaml

OUT = []


def check(name, cond, detail=""):
    OUT.append((bool(cond), name, "" if cond else str(detail)))


def emit():
    for ok, name, detail in OUT:
        print("PASS\t%s" % name if ok else "FAIL\t%s\t%s" % (name, detail.replace("\n", " ")))


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def g(obj, *path, default=None):
    for p in path:
        if isinstance(obj, dict) and p in obj:
            obj = obj[p]
        elif isinstance(obj, list) and isinstance(p, int) and -len(obj) <= p < len(obj):
            obj = obj[p]
        else:
            return default
    return obj


def subset(sel, labels):
    return bool(sel) and all(labels.get(k) == v for k, v in sel.items())


def mib(q):
    m = re.fullmatch(r"(\d+)(Mi|Gi)", str(q))
    if not m:
        return None
    return int(m.group(1)) * (1024 if m.group(2) == "Gi" else 1)


DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


def render_checks(path, exp, docs=None):
    docs = load(path) if docs is None else docs
    hooks = [d for d in docs if "helm.sh/hook" in (g(d, "metadata", "annotations") or {})]
    main = [d for d in docs if d not in hooks]
    kinds = lambda k: [d for d in main if d.get("kind") == k]

    # -- object basics
    bad = [d for d in docs if not (d.get("apiVersion") and d.get("kind") and g(d, "metadata", "name"))]
    check("every object has apiVersion, kind and metadata.name", not bad, bad)
    names = [(d["kind"], d["metadata"]["name"]) for d in docs]
    check("object names are DNS-1123 labels (<= 63 chars)",
          all(DNS1123_LABEL.match(n) and len(n) <= 63 for _, n in names), names)
    check("objects are in namespace %s" % exp["namespace"],
          all(g(d, "metadata", "namespace") == exp["namespace"] for d in docs),
          [(k, n, g(d, "metadata", "namespace")) for (k, n), d in zip(names, docs)])
    check("object kinds = %s" % sorted(exp["kinds"]),
          sorted(d["kind"] for d in main) == sorted(exp["kinds"]), sorted(d["kind"] for d in main))

    stss = kinds("StatefulSet")
    check("exactly one StatefulSet", len(stss) == 1, len(stss))
    if len(stss) != 1:
        return
    sts = stss[0]
    spec = sts["spec"]
    pod = g(spec, "template", "spec") or {}
    pod_labels = g(spec, "template", "metadata", "labels") or {}
    pod_ann = g(spec, "template", "metadata", "annotations") or {}
    check("StatefulSet name is %s" % exp["fullname"], sts["metadata"]["name"] == exp["fullname"],
          sts["metadata"]["name"])
    check("StatefulSet name <= 52 chars (controller-revision-hash label fits)", len(sts["metadata"]["name"]) <= 52)
    check("replicas = %d" % exp["replicas"], spec.get("replicas") == exp["replicas"], spec.get("replicas"))
    check("podManagementPolicy = Parallel", spec.get("podManagementPolicy") == "Parallel",
          spec.get("podManagementPolicy"))
    check("StatefulSet selector matches the pod template labels",
          subset(g(spec, "selector", "matchLabels"), pod_labels))

    # -- Services
    services = {d["metadata"]["name"]: d for d in kinds("Service")}
    check("Service names are DNS-1035 labels", all(DNS1035_LABEL.match(n) for n in services), list(services))
    headless_name = spec.get("serviceName")
    headless = services.get(headless_name)
    check("serviceName (%s) is a rendered Service" % headless_name, headless is not None, list(services))
    if headless:
        hs = headless["spec"]
        check("headless Service: clusterIP None", hs.get("clusterIP") == "None", hs.get("clusterIP"))
        check("headless Service: publishNotReadyAddresses true", hs.get("publishNotReadyAddresses") is True)
        check("headless Service: port %d named http -> targetPort http" % exp["httpPort"],
              any(p.get("name") == "http" and p.get("port") == exp["httpPort"] and p.get("targetPort") in ("http", exp["httpPort"])
                  for p in hs.get("ports", [])), hs.get("ports"))
        check("headless Service: port %d named cluster -> targetPort cluster (peers connect to <pod>.<headless>:%d)"
              % (exp["clusterPort"], exp["clusterPort"]),
              any(p.get("name") == "cluster" and p.get("port") == exp["clusterPort"]
                  and p.get("targetPort") in ("cluster", exp["clusterPort"])
                  for p in hs.get("ports", [])), hs.get("ports"))
        check("headless Service selects the pods", subset(hs.get("selector"), pod_labels))
    client = services.get(exp["fullname"])
    check("client Service %s exists" % exp["fullname"], client is not None, list(services))
    if client:
        cs = client["spec"]
        check("client Service: type ClusterIP, not headless",
              cs.get("type", "ClusterIP") == "ClusterIP" and cs.get("clusterIP") != "None")
        check("client Service: port %d named http -> targetPort http" % exp["servicePort"],
              any(p.get("name") == "http" and p.get("port") == exp["servicePort"] and p.get("targetPort") == "http"
                  for p in cs.get("ports", [])), cs.get("ports"))
        check("client Service selects the pods", subset(cs.get("selector"), pod_labels))
        check("client Service exposes only http (not the cluster or management port)",
              [p.get("targetPort") for p in cs.get("ports", [])] == ["http"], cs.get("ports"))

    # -- container
    ctrs = {c["name"]: c for c in pod.get("containers", [])}
    c = ctrs.get("ringkv")
    check("container 'ringkv' exists", c is not None, list(ctrs))
    if not c:
        return
    image = c.get("image", "")
    repo, _, tag = image.rpartition(":")
    check("image = ringkv:%s (never latest)" % exp["imageTag"],
          repo == "ringkv" and tag == exp["imageTag"] and tag != "latest", image)
    check("imagePullPolicy IfNotPresent", c.get("imagePullPolicy") == "IfNotPresent", c.get("imagePullPolicy"))
    ports = {p.get("name"): p.get("containerPort") for p in c.get("ports", [])}
    check("container ports http=%d, cluster=%d, management=%d" % (exp["httpPort"], exp["clusterPort"], exp["managementPort"]),
          ports == {"http": exp["httpPort"], "cluster": exp["clusterPort"], "management": exp["managementPort"]}, ports)
    check("container ports are TCP and all differ",
          len(set(ports.values())) == len(c.get("ports", [])) == 3
          and all(p.get("protocol", "TCP") == "TCP" for p in c.get("ports", [])), c.get("ports"))

    env_list = c.get("env", [])
    env_names = [e["name"] for e in env_list]
    env = {e["name"]: e for e in env_list}
    val = lambda n: g(env, n, "value")
    check("env names are unique", len(env_names) == len(set(env_names)), env_names)
    check("POD_NAME from the downward API (metadata.name)",
          g(env, "POD_NAME", "valueFrom", "fieldRef", "fieldPath") == "metadata.name")
    check("POD_NAMESPACE from the downward API (metadata.namespace)",
          g(env, "POD_NAMESPACE", "valueFrom", "fieldRef", "fieldPath") == "metadata.namespace")
    refs_ok = True
    for i, e in enumerate(env_list):
        for ref in re.findall(r"\$\((\w+)\)", str(e.get("value", ""))):
            if ref not in env_names[:i]:
                refs_ok = False
    check("$(VAR) references only point to env vars defined earlier", refs_ok)
    check("SERVER_PORT = %d" % exp["httpPort"], val("SERVER_PORT") == str(exp["httpPort"]), val("SERVER_PORT"))
    check("MANAGEMENT_SERVER_PORT = %d" % exp["managementPort"],
          val("MANAGEMENT_SERVER_PORT") == str(exp["managementPort"]), val("MANAGEMENT_SERVER_PORT"))
    check("RINGKV_CLUSTER_PORT = %d (containerPorts.cluster, the container port named cluster)" % exp["clusterPort"],
          val("RINGKV_CLUSTER_PORT") == str(exp["clusterPort"]) == str(ports.get("cluster")), val("RINGKV_CLUSTER_PORT"))
    check("RINGKV_DATA_DIR = /var/lib/ringkv", val("RINGKV_DATA_DIR") == "/var/lib/ringkv", val("RINGKV_DATA_DIR"))
    dns = "%s.$(POD_NAMESPACE).svc.%s" % (headless_name, exp["clusterDomain"])
    check("RINGKV_CLUSTER_DISCOVERY_DNS_NAME = <headless Service>.$(POD_NAMESPACE).svc.%s" % exp["clusterDomain"],
          val("RINGKV_CLUSTER_DISCOVERY_DNS_NAME") == dns and headless is not None,
          "%s != %s" % (val("RINGKV_CLUSTER_DISCOVERY_DNS_NAME"), dns))
    self_url = "http://$(POD_NAME).%s:%d" % (dns, exp["httpPort"])
    check("RINGKV_CLUSTER_SELF = http://$(POD_NAME).<discovery name>:%d" % exp["httpPort"],
          val("RINGKV_CLUSTER_SELF") == self_url, "%s != %s" % (val("RINGKV_CLUSTER_SELF"), self_url))
    duration = re.compile(r"^([0-9]+(ns|us|ms|s|m|h|d)|-?P[0-9TDHMS.,]+)$")
    for n in ("RINGKV_CLUSTER_DISCOVERY_REFRESH_INTERVAL", "RINGKV_REPLICATION_TIMEOUT"):
        check("%s is a duration" % n, duration.match(str(val(n) or "")), val(n))
    check("RINGKV_REPLICATION_FACTOR is a whole number of at least 1",
          re.match(r"^[1-9][0-9]*$", str(val("RINGKV_REPLICATION_FACTOR") or "")), val("RINGKV_REPLICATION_FACTOR"))

    # -- cluster secret: cluster.existingSecret, cluster.secret, or (neither) made by the first node
    source = "existingSecret" if exp.get("existingSecret") else "secret" if exp.get("secretValue") else "generated"
    secrets = {d["metadata"]["name"]: d for d in kinds("Secret")}
    checksum = pod_ann.get("checksum/secret", "")
    check("pod template has a checksum/secret annotation", re.fullmatch(r"[0-9a-f]{64}", checksum), pod_ann)
    ref = g(env, "RINGKV_CLUSTER_SECRET", "valueFrom", "secretKeyRef") or {}
    if source == "generated":
        check("generated secret: no Secret rendered (the first node creates %s)" % exp["fullname"], not secrets,
              list(secrets))
        check("generated secret: no RINGKV_CLUSTER_SECRET", "RINGKV_CLUSTER_SECRET" not in env,
              env.get("RINGKV_CLUSTER_SECRET"))
        check("generated secret: RINGKV_CLUSTER_KUBERNETES_SECRET = %s (the fullname)" % exp["fullname"],
              env.get("RINGKV_CLUSTER_KUBERNETES_SECRET") == {"name": "RINGKV_CLUSTER_KUBERNETES_SECRET",
                                                              "value": exp["fullname"]},
              env.get("RINGKV_CLUSTER_KUBERNETES_SECRET"))
        check("generated secret: checksum/secret = sha256 of generated:%s (the same in every render)" % exp["fullname"],
              checksum == hashlib.sha256(("generated:%s" % exp["fullname"]).encode()).hexdigest(), checksum)
    else:
        check("RINGKV_CLUSTER_SECRET from a Secret, key cluster-secret", ref.get("key") == "cluster-secret", ref)
        check("RINGKV_CLUSTER_SECRET is required (not optional): a node with peers refuses to start without it",
              ref.get("optional") is not True and "value" not in env.get("RINGKV_CLUSTER_SECRET", {}),
              env.get("RINGKV_CLUSTER_SECRET"))
        check("no RINGKV_CLUSTER_KUBERNETES_SECRET (a secret is given)", "RINGKV_CLUSTER_KUBERNETES_SECRET" not in env,
              env.get("RINGKV_CLUSTER_KUBERNETES_SECRET"))
    if source == "existingSecret":
        check("existingSecret %s is referenced and no Secret is rendered" % exp["existingSecret"],
              ref.get("name") == exp["existingSecret"] and not secrets, (ref.get("name"), list(secrets)))
        check("checksum/secret = sha256 of existing:%s" % exp["existingSecret"],
              checksum == hashlib.sha256(("existing:%s" % exp["existingSecret"]).encode()).hexdigest(), checksum)
    elif source == "secret":
        sec = secrets.get(ref.get("name"))
        check("cluster.secret: secretKeyRef points to the one rendered Secret, %s" % exp["fullname"],
              sec is not None and ref.get("name") == exp["fullname"] and len(secrets) == 1,
              (ref.get("name"), list(secrets)))
        if sec:
            raw = g(sec, "data", "cluster-secret")
            try:
                value = base64.b64decode(raw).decode()
            except Exception:
                value = None
            check("Secret has key cluster-secret (base64)", value is not None)
            check("cluster secret = the value given in cluster.secret", value == exp["secretValue"])
            check("checksum/secret = sha256 of the secret value actually rendered",
                  value is not None and checksum == hashlib.sha256(value.encode()).hexdigest())

    # -- probes
    def probe_port(p):
        port = g(p, "httpGet", "port")
        return ports.get(port) if isinstance(port, str) else port

    for kind, path in (("startupProbe", "/actuator/health/liveness"),
                       ("livenessProbe", "/actuator/health/liveness"),
                       ("readinessProbe", "/actuator/health/readiness")):
        p = c.get(kind)
        check("%s: GET %s on the management port (%d)" % (kind, path, exp["managementPort"]),
              p and g(p, "httpGet", "path") == path and probe_port(p) == exp["managementPort"], p)

    # -- heap vs memory limit
    limit = g(c, "resources", "limits", "memory")
    check("memory limit = %s" % exp["memoryLimit"], limit == exp["memoryLimit"], limit)
    jto = val("JAVA_TOOL_OPTIONS") or ""
    xmx = re.findall(r"-Xmx(\d+)([kKmMgG]?)(?=\s|$)", jto)
    check("JAVA_TOOL_OPTIONS has exactly one -Xmx", len(xmx) == 1, jto)
    heap_opts = re.findall(r"-XX:(MaxHeapSize|MaxRAMPercentage|MaxRAM)\b", jto)
    check("no other heap-size option in JAVA_TOOL_OPTIONS", not heap_opts, jto)
    if len(xmx) == 1 and mib(limit):
        n, unit = int(xmx[0][0]), xmx[0][1].lower()
        heap = {"k": n / 1024, "m": n, "g": n * 1024, "": n / (1024 * 1024)}[unit]
        check("-Xmx%s%s = %dMiB (expected)" % (xmx[0][0], xmx[0][1], exp["heapMiB"]), heap == exp["heapMiB"], heap)
        check("heap %dMiB <= 75%% of the %s memory limit" % (heap, limit), heap <= 0.75 * mib(limit),
              "%s / %s" % (heap, mib(limit)))
        direct = re.findall(r"-XX:MaxDirectMemorySize=(\d+)m(?=\s|$)", jto)
        expected_direct = mib(limit) * exp.get("directMemoryPercent", 8) // 100
        check("JAVA_TOOL_OPTIONS caps direct memory once, at %dMiB (jvm.directMemoryPercent of the limit)" % expected_direct,
              len(direct) == 1 and int(direct[0]) == expected_direct, jto)
        check("heap + direct memory <= 80%% of the %s memory limit" % limit,
              len(direct) == 1 and heap + int(direct[0]) <= 0.8 * mib(limit), jto)
    else:
        check("memory limit is <n>Mi or <n>Gi", mib(limit), limit)

    # -- security
    psc = pod.get("securityContext") or {}
    csc = c.get("securityContext") or {}
    check("pod securityContext: runAsNonRoot, runAsUser 10001, fsGroup 10001",
          psc.get("runAsNonRoot") is True and psc.get("runAsUser") == 10001 and psc.get("fsGroup") == 10001, psc)
    check("container securityContext: readOnlyRootFilesystem true", csc.get("readOnlyRootFilesystem") is True)
    check("container securityContext: allowPrivilegeEscalation false", csc.get("allowPrivilegeEscalation") is False)
    check("container securityContext: capabilities drop ALL", "ALL" in (g(csc, "capabilities", "drop") or []))
    check("container securityContext: seccompProfile RuntimeDefault",
          g(csc, "seccompProfile", "type", default=g(psc, "seccompProfile", "type")) == "RuntimeDefault")
    check("container runs as non-root uid 10001",
          csc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True and csc.get("runAsUser", psc.get("runAsUser")) == 10001)
    grace = exp.get("terminationGracePeriodSeconds", 60)
    check("terminationGracePeriodSeconds = %d" % grace, pod.get("terminationGracePeriodSeconds") == grace,
          pod.get("terminationGracePeriodSeconds"))

    # -- volumes
    mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    vcts = {g(t, "metadata", "name"): t for t in spec.get("volumeClaimTemplates", []) or []}
    data = mounts.get("/var/lib/ringkv")
    if exp["persistence"]:
        t = vcts.get(data)
        check("/var/lib/ringkv is a volumeClaimTemplate of %s" % exp["size"],
              t is not None and g(t, "spec", "resources", "requests", "storage") == exp["size"], (data, list(vcts)))
        if t is not None:
            want = exp.get("storageClassName")
            check("data PVC storageClassName = %s" % ("unset (default class)" if want is None else repr(want)),
                  g(t, "spec", "storageClassName") == exp.get("storageClassName"), g(t, "spec", "storageClassName"))
    else:
        check("/var/lib/ringkv is an emptyDir (persistence disabled)",
              "emptyDir" in (vols.get(data) or {}) and not vcts, (data, vols, list(vcts)))
    check("/tmp is an emptyDir", "emptyDir" in (vols.get(mounts.get("/tmp")) or {}), mounts)

    # -- volumePermissions
    inits = {i["name"]: i for i in pod.get("initContainers", []) or []}
    vp = inits.get("volume-permissions")
    if exp["volumePermissions"]:
        cmd = " ".join(vp.get("command", []) + vp.get("args", [])) if vp else ""
        check("volume-permissions init container: chown 10001:10001 /var/lib/ringkv as root",
              vp and "chown" in cmd and "10001:10001" in cmd and "/var/lib/ringkv" in cmd
              and g(vp, "securityContext", "runAsUser") == 0, vp)
        check("volume-permissions mounts the data volume at /var/lib/ringkv",
              vp and any(m["mountPath"] == "/var/lib/ringkv" and m["name"] == data for m in vp.get("volumeMounts", [])))
        check("volume-permissions image is chown-capable (default: the app image)",
              vp and vp.get("image") == exp.get("volumePermissionsImage", image), vp and vp.get("image"))
    else:
        check("no volume-permissions init container (off by default)", vp is None, list(inits))

    # -- service account
    sas = {d["metadata"]["name"]: d for d in kinds("ServiceAccount")}
    sa = sas.get(pod.get("serviceAccountName"))
    check("pod uses the rendered ServiceAccount", sa is not None, (pod.get("serviceAccountName"), list(sas)))
    sa_automount = exp.get("serviceAccountAutomount", False)
    check("ServiceAccount: automountServiceAccountToken %s (serviceAccount.automount)" % json.dumps(sa_automount),
          sa is not None and sa.get("automountServiceAccountToken") is sa_automount,
          sa and sa.get("automountServiceAccountToken"))

    # -- Kubernetes API access: on SIGTERM a node reads its own StatefulSet (cluster.departure); on start it
    # reads, or first creates, the generated cluster secret
    roles, bindings = kinds("Role"), kinds("RoleBinding")
    departure_env = [n for n in env_names if n.startswith("RINGKV_CLUSTER_DEPARTURE_")]
    sts_name = sts["metadata"]["name"]
    want_rules, granted = [], []
    if exp["departure"]:
        want_rules.append({"apiGroups": ["apps"], "resources": ["statefulsets"], "resourceNames": [sts_name],
                           "verbs": ["get"]})
        granted.append("get on statefulsets/%s (apps)" % sts_name)
    if source == "generated":
        want_rules += [{"apiGroups": [""], "resources": ["secrets"], "resourceNames": [exp["fullname"]], "verbs": ["get"]},
                       {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]}]
        granted.append("get on secrets/%s, create on secrets" % exp["fullname"])
    if want_rules:
        why = " and ".join(w for w, on in (("departure", exp["departure"]), ("the generated secret", source == "generated")) if on)
        check("rbac: pod automountServiceAccountToken true (%s: the node calls the Kubernetes API)" % why,
              pod.get("automountServiceAccountToken") is True, pod.get("automountServiceAccountToken"))
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
              role and rb and all(subset(g(spec, "selector", "matchLabels"), g(d, "metadata", "labels") or {}) for d in (role, rb)))
    else:
        check("rbac: no Role and no RoleBinding (departure off, secret given)", not roles and not bindings,
              [(d["kind"], d["metadata"]["name"]) for d in roles + bindings])
        check("rbac: pod automountServiceAccountToken = serviceAccount.automount (%s)" % json.dumps(sa_automount),
              pod.get("automountServiceAccountToken") is sa_automount, pod.get("automountServiceAccountToken"))
    if exp["departure"]:
        check("departure: RINGKV_CLUSTER_DEPARTURE_STATEFUL_SET = the StatefulSet's own name (%s)" % sts_name,
              val("RINGKV_CLUSTER_DEPARTURE_STATEFUL_SET") == sts_name, val("RINGKV_CLUSTER_DEPARTURE_STATEFUL_SET"))
        timeout = val("RINGKV_CLUSTER_DEPARTURE_TIMEOUT")
        check("departure: RINGKV_CLUSTER_DEPARTURE_TIMEOUT = %s" % exp["departure"], timeout == exp["departure"], timeout)
        m = re.fullmatch(r"([1-9][0-9]*)s", str(timeout or ""))
        grace_s = pod.get("terminationGracePeriodSeconds")
        check("departure: timeout %s at least 10s below terminationGracePeriodSeconds (%s)" % (timeout, grace_s),
              m and isinstance(grace_s, int) and int(m.group(1)) + 10 <= grace_s, (timeout, grace_s))
    else:
        check("departure off: no RINGKV_CLUSTER_DEPARTURE_* env var", not departure_env, departure_env)

    # -- PDB
    pdbs = kinds("PodDisruptionBudget")
    check("PodDisruptionBudget maxUnavailable 1, selects the pods",
          len(pdbs) == 1 and g(pdbs[0], "spec", "maxUnavailable") == 1
          and subset(g(pdbs[0], "spec", "selector", "matchLabels"), pod_labels), pdbs)

    # -- scheduling
    aff = g(pod, "affinity", "podAntiAffinity") or {}
    if exp["antiAffinity"] == "soft":
        terms = aff.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        check("soft pod anti-affinity on the pods' labels",
              terms and subset(g(terms[0], "podAffinityTerm", "labelSelector", "matchLabels"), pod_labels)
              and not aff.get("requiredDuringSchedulingIgnoredDuringExecution"), aff)
    elif exp["antiAffinity"] == "hard":
        terms = aff.get("requiredDuringSchedulingIgnoredDuringExecution") or []
        check("hard pod anti-affinity on the pods' labels",
              terms and subset(g(terms[0], "labelSelector", "matchLabels"), pod_labels), aff)
    else:
        check("no pod anti-affinity", not aff, aff)
    tsc = pod.get("topologySpreadConstraints") or []
    if exp["spread"]:
        check("topologySpreadConstraints select the pods",
              tsc and all(subset(g(t, "labelSelector", "matchLabels"), pod_labels) for t in tsc), tsc)
    else:
        check("no topologySpreadConstraints", not tsc, tsc)

    # -- NetworkPolicy
    nps = kinds("NetworkPolicy")
    if exp["networkPolicy"]:
        np_ = nps[0] if len(nps) == 1 else {}
        ingress = g(np_, "spec", "ingress") or []

        def allows(port_name, port_num):
            return [r for r in ingress
                    if any(p.get("port") in (port_name, port_num) for p in r.get("ports", []))]

        def covers(rule, port_name, port_num):
            # A rule without ports (or a port entry without a port) applies to every port.
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

        sts_selector = g(spec, "selector", "matchLabels") or {}

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
                  for r in http_rules for peer in r.get("from", [])), http_rules)
        cluster_rules = [r for r in ingress if covers(r, "cluster", exp["clusterPort"])]
        check("NetworkPolicy allows the cluster port (%d) between ringkv pods" % exp["clusterPort"],
              any(release_pods_only(peer) for r in cluster_rules for peer in r.get("from") or []), cluster_rules)
        check("NetworkPolicy allows the cluster port only from the release's ringkv pods "
              "(not the namespace, test/loadtest pods, extraIngressFrom, other namespaces or IP blocks)",
              all(r.get("from") and all(release_pods_only(peer) for peer in r["from"]) for r in cluster_rules),
              cluster_rules)
        check("NetworkPolicy allows the management port", allows("management", exp["managementPort"]), ingress)
    else:
        check("no NetworkPolicy (off by default)", not nps, nps)

    # -- helm test hook
    tests = [d for d in hooks if g(d, "metadata", "annotations", "helm.sh/hook") == "test"]
    if exp["tests"]:
        check("one helm test hook Pod", len(tests) == 1 and tests[0]["kind"] == "Pod", tests)
        if len(tests) == 1:
            t = tests[0]
            tl = g(t, "metadata", "labels") or {}
            sels = [g(s, "spec", "selector") for s in services.values()]
            sels += [g(p, "spec", "selector", "matchLabels") for p in pdbs] + [g(spec, "selector", "matchLabels")]
            check("test pod is not selected by the Services / PDB / StatefulSet",
                  not any(subset(s, tl) for s in sels if s))
            tc = g(t, "spec", "containers", 0) or {}
            script = " ".join(tc.get("command", []) + tc.get("args", []))
            tenv = {e["name"]: e.get("value") for e in tc.get("env", [])}
            check("test image is %s (not latest)" % exp["testImage"], tc.get("image") == exp["testImage"], tc.get("image"))
            check("test targets the client Service (%s:%d)" % (exp["fullname"], exp["servicePort"]),
                  exp["fullname"] in tenv.values() and str(exp["servicePort"]) in tenv.values(), tenv)
            check("test PUTs with nc (raw HTTP/1.1, Content-Length, Connection: close) expecting 201",
                  all(s in script for s in ("nc ", "PUT", "HTTP/1.1", "Content-Length", "Connection: close",
                                            '"HTTP/1.1 201"')))
            check("test GETs the key back with wget -qO- style and compares the value",
                  "wget -q -O -" in script and '[ "$GOT" = "$VALUE" ]' in script)
            check("test pod: restartPolicy Never, non-root, read-only root fs",
                  g(t, "spec", "restartPolicy") == "Never" and g(t, "spec", "securityContext", "runAsNonRoot") is True
                  and g(tc, "securityContext", "readOnlyRootFilesystem") is True)
    else:
        check("no helm test hook", not tests, tests)


# ---------------------------------------------------------------------------
def normalize(docs):
    drop_labels = {"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/version"}

    def walk(o):
        if isinstance(o, dict):
            out = {}
            for k, v in o.items():
                if k == "labels" and isinstance(v, dict):
                    v = {lk: lv for lk, lv in v.items() if lk not in drop_labels}
                out[k] = walk(v)
            return out
        if isinstance(o, list):
            return [walk(x) for x in o]
        return o

    result = {}
    for d in docs:
        if "helm.sh/hook" in (g(d, "metadata", "annotations") or {}):
            continue
        d = walk(d)
        ns = d["metadata"].pop("namespace", None)
        # A RoleBinding's ServiceAccount subject without a namespace is in the binding's own: the
        # chart writes the release namespace, the namespace-less base leaves it out.
        if d["kind"] == "RoleBinding":
            for subject in d.get("subjects") or []:
                if subject.get("kind") == "ServiceAccount" and ns is not None and subject.get("namespace") == ns:
                    subject.pop("namespace")
        ann = g(d, "spec", "template", "metadata", "annotations")
        if isinstance(ann, dict):
            ann.pop("checksum/secret", None)
            if not ann:
                d["spec"]["template"]["metadata"].pop("annotations")
        result[(d["kind"], d["metadata"]["name"])] = d
    return result


def diff(a, b, path=""):
    if type(a) != type(b):
        return ["%s: %r != %r" % (path or "/", a, b)]
    if isinstance(a, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                out.append("%s/%s: only in %s" % (path, k, "helm" if k in a else "kustomize"))
            else:
                out += diff(a[k], b[k], "%s/%s" % (path, k))
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return ["%s: %d items != %d items" % (path, len(a), len(b))]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += diff(x, y, "%s[%d]" % (path, i))
        return out
    return [] if a == b else ["%s: %r != %r" % (path, a, b)]


def compare(helm_path, kust_path):
    h, k = load(helm_path), load(kust_path)
    hk = sorted(d["kind"] for d in h if "helm.sh/hook" not in (g(d, "metadata", "annotations") or {}))
    kk = sorted(d["kind"] for d in k)
    check("kustomize base has the same kinds as the chart's default render", hk == kk, "helm %s, kustomize %s" % (hk, kk))
    hn, kn = normalize(h), normalize(k)
    check("same objects (kind/name)", sorted(hn) == sorted(kn), "helm %s, kustomize %s" % (sorted(hn), sorted(kn)))
    for key in sorted(set(hn) & set(kn)):
        d = diff(hn[key], kn[key])
        check("%s/%s identical to the chart's (ignoring helm labels, namespace, checksum/secret)" % key,
              not d, "; ".join(d[:6]))
    secrets = [d["metadata"]["name"] for d in k if d.get("kind") == "Secret"]
    check("kustomize base renders no Secret (the first node creates it)", not secrets, secrets)


def secret_findings(files):
    """files: {path: [YAML documents]} -> [(path, what)] for every Secret, secretGenerator, stringData,
    literal RINGKV_CLUSTER_SECRET or cluster-secret=... literal in them."""
    found = []

    def walk(o, path):
        if isinstance(o, dict):
            if o.get("name") == "RINGKV_CLUSTER_SECRET" and "value" in o:
                found.append((path, "RINGKV_CLUSTER_SECRET with a literal value"))
            for k, v in o.items():
                if k in ("secretGenerator", "stringData"):
                    found.append((path, k))
                walk(v, path)
        elif isinstance(o, list):
            for x in o:
                walk(x, path)
        elif isinstance(o, str) and re.search(r"cluster-secret\s*=", o):
            found.append((path, "a cluster-secret= literal"))

    for path, docs in sorted(files.items()):
        for d in docs:
            if isinstance(d, dict) and d.get("kind") == "Secret":
                found.append((path, "a Secret"))
            walk(d, path)
    return found


def k8s_no_secret(k8s_dir):
    """The base holds no secret (comments may show an overlay that adds one): the first node makes it."""
    import os
    files, found = {}, []
    for root, _, names in os.walk(k8s_dir):
        for name in names:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, k8s_dir)
            if name.endswith((".yaml", ".yml")):
                files[rel] = load(path)
            else:
                with open(path, errors="replace") as f:
                    if "cluster-secret" in f.read():
                        found.append((rel, "mentions cluster-secret"))
    found += secret_findings(files)
    check("no file in k8s/ holds a Secret, a secretGenerator or a secret literal", not found, found)
    broken = {
        "a secretGenerator with a literal": {"kustomization.yaml": [
            {"kind": "Kustomization", "secretGenerator": [{"name": "ringkv", "literals": ["cluster-secret=CHANGE-ME"]}]}]},
        "a Secret": {"secret.yaml": [
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "ringkv"}, "data": {"cluster-secret": "eA=="}}]},
        "RINGKV_CLUSTER_SECRET with a literal value": {"statefulset.yaml": [
            {"kind": "StatefulSet", "spec": {"template": {"spec": {"containers": [
                {"name": "ringkv", "env": [{"name": "RINGKV_CLUSTER_SECRET", "value": "0123456789abcdef"}]}]}}}}]},
    }
    for what, files in broken.items():
        check("the no-secret check catches %s" % what, secret_findings(files), "not caught")


# ---------------------------------------------------------------------------
def schema_coverage(values_path, schema_path):
    with open(values_path) as f:
        values = yaml.safe_load(f)
    with open(schema_path) as f:
        schema = json.load(f)
    missing, extra = [], []

    def walk(v, s, path):
        props = s.get("properties")
        if isinstance(v, dict) and props is not None:
            for k, sub in v.items():
                if k not in props:
                    missing.append(path + k)
                else:
                    walk(sub, props[k], path + k + ".")
            for k in props:
                if k not in v and k != "global" and s.get("additionalProperties") is False and path.count(".") < 1:
                    extra.append(path + k)

    walk(values, schema, "")
    check("values.schema.json describes every key of values.yaml", not missing, missing)
    check("every top-level schema property is in values.yaml", not extra, extra)
    check("schema rejects unknown top-level keys (additionalProperties false)", schema.get("additionalProperties") is False)


# ---------------------------------------------------------------------------
SCRIPTS = ("fill.js", "kv.js", "lib.js")
CHART_ENV = ("BASE_URL", "SCENARIO", "RATE", "DURATION", "REPLICAS", "KEYSPACE", "VALUE_SIZE",
             "P99_MS", "MAX_ERROR_RATE", "FILLED", "SUMMARY_JSON", "K6_NO_USAGE_REPORT")


def is_loadtest(d):
    return g(d, "metadata", "labels", "app.kubernetes.io/component") == "loadtest"


def loadtest_checks(path, exp, scripts_dir):
    docs = load(path)
    jobs = [d for d in docs if d.get("kind") == "Job"]
    cms = [d for d in docs if d.get("kind") == "ConfigMap" and is_loadtest(d)]
    if not exp["enabled"]:
        check("loadtest disabled: no Job and no loadtest ConfigMap rendered", not jobs and not cms,
              [(d["kind"], d["metadata"]["name"]) for d in jobs + cms])
        return
    check("one Job, labelled component=loadtest", len(jobs) == 1 and is_loadtest(jobs[0]),
          [(d["metadata"]["name"], g(d, "metadata", "labels")) for d in jobs])
    check("one loadtest ConfigMap", len(cms) == 1, [d["metadata"]["name"] for d in cms])
    if len(jobs) != 1 or len(cms) != 1:
        return
    job, cm = jobs[0], cms[0]
    name = job["metadata"]["name"]
    check("Job is not a hook (helm install/upgrade creates it)",
          "helm.sh/hook" not in (g(job, "metadata", "annotations") or {}), g(job, "metadata", "annotations"))
    prefix = exp["fullname"][:45].rstrip("-") + "-loadtest-"
    check("Job name %s<8 hex>, a DNS label <= 63 chars" % prefix,
          name.startswith(prefix) and re.fullmatch(r"[0-9a-f]{8}", name[len(prefix):])
          and len(name) <= 63 and DNS1123_LABEL.match(name), name)
    check("objects are in namespace %s" % exp["namespace"],
          g(job, "metadata", "namespace") == exp["namespace"] and g(cm, "metadata", "namespace") == exp["namespace"])

    # -- scripts: the files of loadtest/, byte for byte
    data = cm.get("data") or {}
    check("ConfigMap holds exactly %s" % ", ".join(SCRIPTS), sorted(data) == sorted(SCRIPTS), sorted(data))
    for script in SCRIPTS:
        with open("%s/%s" % (scripts_dir, script), "rb") as f:
            want = f.read()
        got = data.get(script)
        check("ConfigMap %s is byte-identical to loadtest/%s" % (script, script),
              got is not None and got.encode() == want,
              "missing" if got is None else "%d bytes, loadtest/%s has %d" % (len(got.encode()), script, len(want)))

    spec = job.get("spec") or {}
    pod = g(spec, "template", "spec") or {}
    pod_labels = g(spec, "template", "metadata", "labels") or {}
    ctrs = pod.get("containers") or []
    check("one container, k6", [c.get("name") for c in ctrs] == ["k6"], [c.get("name") for c in ctrs])
    if not ctrs:
        return
    c = ctrs[0]
    check("k6 image = %s" % exp["image"], c.get("image") == exp["image"], c.get("image"))
    check("imagePullPolicy IfNotPresent", c.get("imagePullPolicy") == "IfNotPresent", c.get("imagePullPolicy"))
    args = c.get("args") or []
    check("k6 runs /scripts/kv.js with the image's entrypoint (args: run ... /scripts/kv.js)",
          not c.get("command") and args[:1] == ["run"] and args[-1:] == ["/scripts/kv.js"], (c.get("command"), args))

    # -- volumes
    vols = {v["name"]: v for v in pod.get("volumes") or []}
    mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts") or []}
    check("/scripts is the loadtest ConfigMap (%s)" % cm["metadata"]["name"],
          g(vols.get(mounts.get("/scripts")), "configMap", "name") == cm["metadata"]["name"], (mounts, vols))
    check("/tmp is an emptyDir", "emptyDir" in (vols.get(mounts.get("/tmp")) or {}), (mounts, vols))

    # -- environment
    env_list = c.get("env") or []
    names = [e["name"] for e in env_list]
    env = {e["name"]: e.get("value") for e in env_list}
    check("env names are unique", len(names) == len(set(names)), names)
    services = {d["metadata"]["name"]: d for d in docs if d.get("kind") == "Service"}
    client = services.get(exp["fullname"])
    url = "http://%s:%d" % (exp["fullname"], exp["servicePort"])
    check("BASE_URL = %s, the client Service and its port" % url,
          env.get("BASE_URL") == url and client is not None
          and any(p.get("port") == exp["servicePort"] for p in g(client, "spec", "ports", default=[])),
          (env.get("BASE_URL"), list(services)))
    want = {"SCENARIO": exp["scenario"], "RATE": exp["rate"], "DURATION": exp["duration"],
            "REPLICAS": exp["replicas"], "KEYSPACE": exp["keyspace"], "VALUE_SIZE": exp["valueSize"],
            "P99_MS": exp["p99Ms"], "MAX_ERROR_RATE": exp["maxErrorRate"],
            "FILLED": "0" if exp["fill"] == "none" else "1", "SUMMARY_JSON": "none",
            "K6_NO_USAGE_REPORT": "true"}
    want.update(exp.get("env", {}))
    got = {k: env.get(k) for k in want}
    check("env carries the values: %s" % " ".join("%s=%s" % kv for kv in sorted(want.items())),
          got == want, {k: (got[k], v) for k, v in want.items() if got[k] != v})
    check("every env value is a string", all(isinstance(e.get("value"), str) for e in env_list),
          [e for e in env_list if not isinstance(e.get("value"), str)])

    # -- the fill init container
    inits = pod.get("initContainers") or []
    if exp["fill"] == "init":
        f = inits[0] if len(inits) == 1 else {}
        check("fill=init: one init container 'fill' running /scripts/fill.js",
              f.get("name") == "fill" and (f.get("args") or [])[-1:] == ["/scripts/fill.js"], inits)
        check("fill init container: same image, env, mounts and security context as k6",
              all(f.get(k) == c.get(k) for k in ("image", "env", "volumeMounts", "securityContext", "resources")))
    else:
        check("fill=%s: no init container" % exp["fill"], not inits, inits)

    # -- the Job
    check("restartPolicy Never, backoffLimit 0", pod.get("restartPolicy") == "Never" and spec.get("backoffLimit") == 0,
          (pod.get("restartPolicy"), spec.get("backoffLimit")))
    check("activeDeadlineSeconds = %d" % exp["activeDeadlineSeconds"],
          spec.get("activeDeadlineSeconds") == exp["activeDeadlineSeconds"], spec.get("activeDeadlineSeconds"))
    check("ttlSecondsAfterFinished = %s" % json.dumps(exp.get("ttl")), spec.get("ttlSecondsAfterFinished") == exp.get("ttl"),
          spec.get("ttlSecondsAfterFinished"))
    check("memory limit set", g(c, "resources", "limits", "memory"), c.get("resources"))

    # -- security
    psc = pod.get("securityContext") or {}
    csc = c.get("securityContext") or {}
    check("k6 pod: runAsNonRoot, non-root uid, no service account token",
          csc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True
          and (csc.get("runAsUser", psc.get("runAsUser")) or 0) > 0
          and pod.get("automountServiceAccountToken") is False, (psc, pod.get("automountServiceAccountToken")))
    check("k6 container: read-only root fs, no privilege escalation, capabilities drop ALL, seccomp RuntimeDefault",
          csc.get("readOnlyRootFilesystem") is True and csc.get("allowPrivilegeEscalation") is False
          and "ALL" in (g(csc, "capabilities", "drop") or [])
          and g(csc, "seccompProfile", "type", default=g(psc, "seccompProfile", "type")) == "RuntimeDefault", csc)

    # -- labels: the k6 pod must never be a backend of the Services, the PDB or the StatefulSet
    sels = [g(d, "spec", "selector") for d in services.values()]
    sels += [g(d, "spec", "selector", "matchLabels") for d in docs if d.get("kind") in ("PodDisruptionBudget", "StatefulSet")]
    check("pod labelled component=loadtest, not selected by the Services / PDB / StatefulSet",
          pod_labels.get("app.kubernetes.io/component") == "loadtest" and not any(subset(s_, pod_labels) for s_ in sels if s_),
          pod_labels)
    nps = [d for d in docs if d.get("kind") == "NetworkPolicy"]
    if exp.get("networkPolicy"):
        rules = [r for np_ in nps for r in g(np_, "spec", "ingress", default=[])
                 if any(p.get("port") == "http" for p in r.get("ports", []))]
        check("NetworkPolicy lets the k6 pod reach the http port",
              any(subset(g(peer, "podSelector", "matchLabels"), pod_labels) for r in rules for peer in r.get("from", [])),
              rules)


def normalize_loadtest(docs, jobs_hashed):
    docs = [d for d in docs if is_loadtest(d) or d.get("kind") == "Job"]
    out = {}
    for d in normalize(docs).values():
        if d["kind"] == "Job":
            if jobs_hashed:
                d["metadata"]["name"] = re.sub(r"-[0-9a-f]{8}$", "", d["metadata"]["name"])
            for v in g(d, "spec", "template", "spec", "volumes", default=[]):
                if "configMap" in v:
                    v["configMap"]["name"] = re.sub(r"-[a-z0-9]{10}$", "", v["configMap"]["name"])
        elif d["kind"] == "ConfigMap":
            d["metadata"]["name"] = re.sub(r"-[a-z0-9]{10}$", "", d["metadata"]["name"])
        out[(d["kind"], d["metadata"]["name"])] = d
    return out


def compare_loadtest(helm_path, kust_path):
    hn = normalize_loadtest(load(helm_path), True)
    kn = normalize_loadtest(load(kust_path), False)
    check("k8s/loadtest has the chart's loadtest objects (Job name without its hash, ConfigMap without kustomize's)",
          sorted(hn) == sorted(kn), "helm %s, kustomize %s" % (sorted(hn), sorted(kn)))
    for key in sorted(set(hn) & set(kn)):
        d = diff(hn[key], kn[key])
        check("%s/%s identical to the chart's (loadtest.enabled=true, ignoring helm labels, namespace)" % key,
              not d, "; ".join(d[:6]))


def np_teeth(path, exp):
    """The NetworkPolicy checks must fail on copies of a good render whose policy lets others reach the
    cluster port, or shuts the ringkv pods out of it: otherwise they would prove nothing."""
    import copy
    global OUT
    good = load(path)

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
    results = []
    for what, (mutate, expect) in broken.items():
        docs = copy.deepcopy(good)
        mutate([d for d in docs if d.get("kind") == "NetworkPolicy"][0])
        OUT = []
        render_checks(path, exp, docs)
        failed = [name for ok, name, _ in OUT if not ok]
        results.append(("the NetworkPolicy checks catch a cluster port open to %s" % what,
                        any("cluster port" in n and expect in n for n in failed), failed))
    OUT = [(bool(ok), name, "" if ok else str(detail)) for name, ok, detail in results]


def rbac_teeth(path, exp):
    """The RBAC checks must fail on copies of a good render (departure on, generated secret) whose Role grants
    more than `get` on the one StatefulSet, `get` on the one Secret and `create` on Secrets, or less, or whose
    RoleBinding names someone else: otherwise they would prove nothing."""
    import copy
    global OUT
    good = load(path)

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

    def any_secret(docs):
        rule(docs, 1).pop("resourceNames")

    def another_secret(docs):
        rule(docs, 1)["resourceNames"].append("other")

    def list_secrets(docs):
        rule(docs, 1)["verbs"].append("list")

    def named_create(docs):
        rule(docs, 2)["resourceNames"] = [exp["fullname"]]

    def update_secrets(docs):
        rule(docs, 2)["verbs"].append("update")

    def no_create(docs):
        first(docs, "Role")["rules"].pop(2)

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
        "a Role that reads every Secret (no resourceNames)": (any_secret, "Role grants only"),
        "a Role that reads a second Secret too": (another_secret, "Role grants only"),
        "a Role that also lists Secrets": (list_secrets, "Role grants only"),
        "a create limited by resourceNames (which never matches a create)": (named_create, "Role grants only"),
        "a Role that may also update Secrets": (update_secrets, "Role grants only"),
        "a Role without create on Secrets (the first node cannot make the secret)": (no_create, "Role grants only"),
        "a RoleBinding to the namespace's default ServiceAccount": (default_account, "only subject"),
        "a RoleBinding to a ServiceAccount of another namespace": (other_namespace, "only subject"),
        "pods without the token": (no_token, "automountServiceAccountToken true"),
    }
    results = []
    for what, (mutate, expect) in broken.items():
        docs = copy.deepcopy(good)
        mutate(docs)
        OUT = []
        render_checks(path, exp, docs)
        failed = [name for ok, name, _ in OUT if not ok]
        results.append(("the RBAC checks catch %s" % what,
                        any(n.startswith("rbac:") and expect in n for n in failed), failed))
    OUT = [(bool(ok), name, "" if ok else str(detail)) for name, ok, detail in results]


def rbac_namespace(path, namespace, secret_file):
    docs = load(path)
    by_kind = lambda k: [d for d in docs if d.get("kind") == k]
    sas, roles, rbs = by_kind("ServiceAccount"), by_kind("Role"), by_kind("RoleBinding")
    stss, secrets = by_kind("StatefulSet"), by_kind("Secret")
    if len(stss) == len(roles) == len(secrets) == 1:
        sts_name = stss[0]["metadata"]["name"]
        check("overlay: the Role still grants get on statefulsets/%s and secrets/%s, create on secrets "
              "(not renamed after the overlay's Secret)" % (sts_name, sts_name),
              roles[0].get("rules") == [{"apiGroups": ["apps"], "resources": ["statefulsets"],
                                         "resourceNames": [sts_name], "verbs": ["get"]},
                                        {"apiGroups": [""], "resources": ["secrets"],
                                         "resourceNames": [sts_name], "verbs": ["get"]},
                                        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]}],
              roles[0].get("rules"))
        envs = g(stss[0], "spec", "template", "spec", "containers", 0, "env", default=[])
        ref = [g(e, "valueFrom", "secretKeyRef") for e in envs if e.get("name") == "RINGKV_CLUSTER_SECRET"]
        with open(secret_file, "rb") as f:
            want = f.read()
        check("overlay: RINGKV_CLUSTER_SECRET comes from the overlay's Secret (%s), holding its file"
              % secrets[0]["metadata"]["name"],
              ref == [{"name": secrets[0]["metadata"]["name"], "key": "cluster-secret"}]
              and base64.b64decode(g(secrets[0], "data", "cluster-secret", default="")) == want, ref)
    else:
        check("overlay: one StatefulSet, Role and Secret", False, [(d["kind"], d["metadata"]["name"]) for d in docs])
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


def job_name(path):
    names = [d["metadata"]["name"] for d in load(path) if d.get("kind") == "Job"]
    print(names[0] if len(names) == 1 else "")


mode = sys.argv[1]
if mode == "jobname":
    job_name(sys.argv[2])
    sys.exit(0)
try:
    if mode == "render":
        render_checks(sys.argv[2], json.loads(sys.argv[3]))
    elif mode == "np-teeth":
        np_teeth(sys.argv[2], json.loads(sys.argv[3]))
    elif mode == "rbac-teeth":
        rbac_teeth(sys.argv[2], json.loads(sys.argv[3]))
    elif mode == "rbac-namespace":
        rbac_namespace(sys.argv[2], sys.argv[3], sys.argv[4])
    elif mode == "loadtest":
        loadtest_checks(sys.argv[2], json.loads(sys.argv[3]), sys.argv[4])
    elif mode == "compare-loadtest":
        compare_loadtest(sys.argv[2], sys.argv[3])
    elif mode == "compare":
        compare(sys.argv[2], sys.argv[3])
    elif mode == "k8s-no-secret":
        k8s_no_secret(sys.argv[2])
    elif mode == "schema-coverage":
        schema_coverage(sys.argv[2], sys.argv[3])
except Exception as e:  # a crash is a failed check, not a silent pass
    import traceback
    check("checker ran without error", False, traceback.format_exc())
emit()
PY

# Feeds check.py's output into pass/fail.
run_checker() {
  local status name detail
  if ! "$PYTHON" "$WORK/check.py" "$@" >"$WORK/checker.out" 2>&1; then
    fail "checker exited with an error" "$WORK/checker.out"
    return
  fi
  while IFS=$'\t' read -r status name detail; do
    case "$status" in
      PASS) pass "$name" ;;
      FAIL) printf '%s\n' "$detail" >"$WORK/detail"; fail "$name" "$WORK/detail" ;;
      *) fail "unexpected checker output: $status $name" ;;
    esac
  done <"$WORK/checker.out"
}

# must_succeed NAME CMD...
must_succeed() {
  local name=$1; shift
  if "$@" >"$WORK/cmd.out" 2>&1; then pass "$name"; else fail "$name" "$WORK/cmd.out"; fi
}

# must_fail NAME REGEX CMD...: the command must fail and its output match REGEX.
must_fail() {
  local name=$1 regex=$2; shift 2
  if "$@" >"$WORK/cmd.out" 2>&1; then
    fail "$name (command succeeded)"
  elif grep -Eq -- "$regex" "$WORK/cmd.out"; then
    pass "$name"
  else
    fail "$name (failed, but not with /$regex/)" "$WORK/cmd.out"
  fi
}

# render_case NAME RELEASE NAMESPACE EXPECT_JSON [helm args...]
render_case() {
  local name=$1 release=$2 namespace=$3 expect=$4; shift 4
  section "render: $name"
  printf '   helm template %s -n %s %s\n' "$release" "$namespace" "$*"
  if "$HELM" template "$release" "$CHART" --namespace "$namespace" "$@" >"$WORK/$name.yaml" 2>"$WORK/$name.err"; then
    pass "helm template succeeds"
    run_checker render "$WORK/$name.yaml" "$expect"
  else
    fail "helm template succeeds" "$WORK/$name.err"
  fi
}

echo "ringkv chart verification"
echo "  helm:    $HELM ($("$HELM" version --short 2>/dev/null || "$HELM" version))"
echo "  python:  $("$PYTHON" --version 2>&1), PyYAML $("$PYTHON" -c 'import yaml; print(yaml.__version__)')"
echo "  kubectl: ${KUBECTL:-absent}"

# ---------------------------------------------------------------------------
section "lint"
CUSTOM_SET="replicaCount=5,networkPolicy.enabled=true,volumePermissions.enabled=true,resources.limits.memory=2Gi,resources.requests.memory=2Gi,fullnameOverride=kv,clusterDomain=corp.internal,podAntiAffinity.type=hard,persistence.size=10Gi,persistence.storageClass=fast-ssd,networkPolicy.allowSameNamespace=false"
must_succeed "helm lint" "$HELM" lint "$CHART"
must_succeed "helm lint --strict" "$HELM" lint --strict "$CHART"
must_succeed "helm lint --strict (non-default values)" "$HELM" lint --strict "$CHART" --set "$CUSTOM_SET"
must_fail "helm lint rejects replicaCount=-1" "schema" "$HELM" lint --strict "$CHART" --set replicaCount=-1
must_succeed "helm lint --strict (loadtest enabled)" "$HELM" lint --strict "$CHART" --set loadtest.enabled=true,loadtest.fill=init
run_checker schema-coverage "$CHART/values.yaml" "$CHART/values.schema.json"

# ---------------------------------------------------------------------------
DEFAULT_KINDS='["ServiceAccount","Role","RoleBinding","Service","Service","StatefulSet","PodDisruptionBudget"]'

render_case default ringkv default "$(cat <<EOF
{"namespace":"default","fullname":"ringkv","replicas":3,"imageTag":"0.1.0","clusterDomain":"cluster.local",
 "httpPort":8080,"clusterPort":7070,"managementPort":9090,"servicePort":8080,"memoryLimit":"768Mi","heapMiB":253,
 "persistence":true,"size":"1Gi","storageClassName":null,"volumePermissions":false,"networkPolicy":false,
 "antiAffinity":"soft","spread":true,"tests":true,"testImage":"busybox:1.37.0","departure":"45s","kinds":$DEFAULT_KINDS}
EOF
)"

# The point of the generated secret: no randomness and no lookup in the chart, so that helm template
# and GitOps tools (Argo CD) render the same manifests every time, and a sync never rolls the pods.
section "reproducible renders"
if "$HELM" template ringkv "$CHART" --namespace default >"$WORK/default-again.yaml" 2>"$WORK/default-again.err" \
    && [ -s "$WORK/default.yaml" ] && cmp -s "$WORK/default.yaml" "$WORK/default-again.yaml"; then
  pass "two helm template renders of the default values are byte-identical"
else
  diff "$WORK/default.yaml" "$WORK/default-again.yaml" >"$WORK/detail" 2>&1 || cat "$WORK/default-again.err" >>"$WORK/detail"
  fail "two helm template renders of the default values are byte-identical" "$WORK/detail"
fi
if grep -rnoE '\{\{[^}]*\b(lookup|rand[A-Za-z]*|uuidv4|now|gen[A-Za-z]*(Key|CA|Cert))\b' "$CHART/templates" >"$WORK/random.out"; then
  fail "no template calls lookup, rand*, uuidv4, now or gen* (a render depends on nothing but the values)" "$WORK/random.out"
else
  pass "no template calls lookup, rand*, uuidv4, now or gen* (a render depends on nothing but the values)"
fi

render_case custom rel kvns "$(cat <<EOF
{"namespace":"kvns","fullname":"kv","replicas":5,"imageTag":"0.1.0","clusterDomain":"corp.internal",
 "httpPort":8080,"clusterPort":7070,"managementPort":9090,"servicePort":8080,"memoryLimit":"2Gi","heapMiB":675,
 "persistence":true,"size":"10Gi","storageClassName":"fast-ssd","volumePermissions":true,"networkPolicy":true,
 "antiAffinity":"hard","spread":true,"tests":true,"testImage":"busybox:1.37.0","departure":"45s",
 "kinds":["ServiceAccount","Role","RoleBinding","Service","Service","StatefulSet","PodDisruptionBudget","NetworkPolicy"]}
EOF
)" --set "$CUSTOM_SET" \
   --set 'networkPolicy.managementFrom[0].namespaceSelector.matchLabels.kubernetes\.io/metadata\.name=monitoring' \
   --set-json 'extraEnv=[{"name":"LOGGING_LEVEL_ROOT","value":"INFO"}]'

render_case existing-secret my-db default "$(cat <<EOF
{"namespace":"default","fullname":"my-db-ringkv","replicas":3,"imageTag":"0.1.0","clusterDomain":"cluster.local",
 "httpPort":8080,"clusterPort":7070,"managementPort":9090,"servicePort":80,"memoryLimit":"1000Mi","heapMiB":750,
 "directMemoryPercent":5,
 "persistence":false,"volumePermissions":false,"networkPolicy":false,"existingSecret":"ringkv-shared",
 "antiAffinity":"none","spread":false,"tests":false,"departure":"45s",
 "kinds":["ServiceAccount","Role","RoleBinding","Service","Service","StatefulSet","PodDisruptionBudget"]}
EOF
)" --set jvm.heapPercent=75,jvm.directMemoryPercent=5,resources.limits.memory=1000Mi,resources.requests.memory=1000Mi \
   --set cluster.existingSecret=ringkv-shared,persistence.enabled=false,podAntiAffinity.type=none \
   --set tests.enabled=false,service.port=80 --set-json 'topologySpreadConstraints=[]'

cat >"$WORK/values-ports.yaml" <<'EOF'
nameOverride: store
image:
  tag: "0.2.0"
containerPorts:
  http: 8081
  cluster: 7071
  management: 9091
cluster:
  secret: 0123456789abcdef0123456789abcdef
volumePermissions:
  enabled: true
  image:
    repository: debian
    tag: bookworm-slim
persistence:
  storageClass: "-"
EOF
render_case ports-and-secret ringkv default "$(cat <<EOF
{"namespace":"default","fullname":"ringkv-store","replicas":3,"imageTag":"0.2.0","clusterDomain":"cluster.local",
 "httpPort":8081,"clusterPort":7071,"managementPort":9091,"servicePort":8080,"memoryLimit":"768Mi","heapMiB":253,
 "persistence":true,"size":"1Gi","storageClassName":"","volumePermissions":true,
 "volumePermissionsImage":"debian:bookworm-slim","networkPolicy":false,
 "secretValue":"0123456789abcdef0123456789abcdef",
 "antiAffinity":"soft","spread":true,"tests":true,"testImage":"busybox:1.37.0","departure":"45s",
 "kinds":["ServiceAccount","Role","RoleBinding","Secret","Service","Service","StatefulSet","PodDisruptionBudget"]}
EOF
)" -f "$WORK/values-ports.yaml"

# The NetworkPolicy with every source it can open the HTTP port to (the namespace, the test and
# loadtest pods, extraIngressFrom with other namespaces and IP blocks): the cluster port stays
# with the release's own ringkv pods. np-teeth then breaks copies of this render's policy and
# expects the NetworkPolicy checks to fail on each.
cat >"$WORK/values-netpol.yaml" <<'EOF'
networkPolicy:
  enabled: true
  allowSameNamespace: true
  extraIngressFrom:
    - namespaceSelector:
        matchLabels:
          kubernetes.io/metadata.name: clients
    - ipBlock:
        cidr: 10.0.0.0/8
    - namespaceSelector: {}
      podSelector:
        matchLabels:
          app.kubernetes.io/name: ringkv
          app.kubernetes.io/instance: ringkv
loadtest:
  enabled: true
EOF
NETPOL_EXPECT="$(cat <<EOF
{"namespace":"default","fullname":"ringkv","replicas":3,"imageTag":"0.1.0","clusterDomain":"cluster.local",
 "httpPort":8080,"clusterPort":7070,"managementPort":9090,"servicePort":8080,"memoryLimit":"768Mi","heapMiB":253,
 "persistence":true,"size":"1Gi","storageClassName":null,"volumePermissions":false,"networkPolicy":true,
 "antiAffinity":"soft","spread":true,"tests":true,"testImage":"busybox:1.37.0","departure":"45s",
 "kinds":["ServiceAccount","Role","RoleBinding","Service","Service","StatefulSet","PodDisruptionBudget","NetworkPolicy","ConfigMap","Job"]}
EOF
)"
render_case network-policy ringkv default "$NETPOL_EXPECT" -f "$WORK/values-netpol.yaml"
if [ -s "$WORK/network-policy.yaml" ]; then
  run_checker np-teeth "$WORK/network-policy.yaml" "$NETPOL_EXPECT"
fi

# The nodes' Kubernetes API calls: with cluster.departure a pod removed by a scale-down reads its own
# StatefulSet (Role with `get` on it alone) and hands its data over for at most the timeout, which
# must stay 10s below the grace period; with the generated secret (neither cluster.secret nor
# existingSecret) a starting node reads Secret <fullname>, or first creates it (`get` on it alone,
# `create` on Secrets). Both need the RoleBinding to the pods' ServiceAccount and the token. The
# default render above has both on; rbac-teeth breaks copies of that render's Role/RoleBinding/token
# and expects the checks to fail.
DEFAULT_EXPECT_BASE='"namespace":"default","fullname":"ringkv","replicas":3,"imageTag":"0.1.0","clusterDomain":"cluster.local",
 "httpPort":8080,"clusterPort":7070,"managementPort":9090,"servicePort":8080,"memoryLimit":"768Mi","heapMiB":253,
 "persistence":true,"size":"1Gi","storageClassName":null,"volumePermissions":false,"networkPolicy":false,
 "antiAffinity":"soft","spread":true,"tests":true,"testImage":"busybox:1.37.0"'
if [ -s "$WORK/default.yaml" ]; then
  run_checker rbac-teeth "$WORK/default.yaml" "{$DEFAULT_EXPECT_BASE,\"departure\":\"45s\",\"kinds\":$DEFAULT_KINDS}"
fi
# Departure off, the secret still generated: the Role keeps the Secrets rules, the token stays
# mounted. The timeout is not used and not checked (600s > the 60s grace period).
render_case departure-off ringkv default "{$DEFAULT_EXPECT_BASE,\"departure\":false,\"kinds\":$DEFAULT_KINDS}" \
  --set cluster.departure.enabled=false,cluster.departure.timeout=600s
# Departure off and a secret given: no API call, so no Role, no RoleBinding, and the token as
# serviceAccount.automount says.
NO_RBAC_KINDS='["ServiceAccount","Service","Service","StatefulSet","PodDisruptionBudget"]'
render_case departure-off-secret ringkv default \
  "{$DEFAULT_EXPECT_BASE,\"departure\":false,\"secretValue\":\"0123456789abcdef\",\"kinds\":[\"ServiceAccount\",\"Secret\",\"Service\",\"Service\",\"StatefulSet\",\"PodDisruptionBudget\"]}" \
  --set cluster.departure.enabled=false,cluster.secret=0123456789abcdef
render_case departure-off-automount ringkv default \
  "{$DEFAULT_EXPECT_BASE,\"departure\":false,\"existingSecret\":\"ringkv-shared\",\"serviceAccountAutomount\":true,\"kinds\":$NO_RBAC_KINDS}" \
  --set cluster.departure.enabled=false,cluster.existingSecret=ringkv-shared,serviceAccount.automount=true
# On, in another namespace, with a ServiceAccount of another name, the token on for the
# ServiceAccount too, and the longest timeout the grace period allows (120s - 10s).
cat >"$WORK/values-departure.yaml" <<'EOF'
terminationGracePeriodSeconds: 120
cluster:
  departure:
    enabled: true
    timeout: 110s
serviceAccount:
  name: ringkv-nodes
  automount: true
EOF
render_case departure-custom store kvns "$(cat <<EOF
{"namespace":"kvns","fullname":"store-ringkv","replicas":3,"imageTag":"0.1.0","clusterDomain":"cluster.local",
 "httpPort":8080,"clusterPort":7070,"managementPort":9090,"servicePort":8080,"memoryLimit":"768Mi","heapMiB":253,
 "persistence":true,"size":"1Gi","storageClassName":null,"volumePermissions":false,"networkPolicy":false,
 "antiAffinity":"soft","spread":true,"tests":true,"testImage":"busybox:1.37.0",
 "terminationGracePeriodSeconds":120,"departure":"110s","serviceAccountAutomount":true,"kinds":$DEFAULT_KINDS}
EOF
)" -f "$WORK/values-departure.yaml"

# ---------------------------------------------------------------------------
section "bad values are rejected"
SCHEMA_ERR="values don't meet the specifications of the schema"
bad() { must_fail "rejects $1" "$2" "$HELM" template ringkv "$CHART" "${@:3}"; }
bad "replicaCount=-1"                          "$SCHEMA_ERR" --set replicaCount=-1
bad "replicaCount=0"                           "$SCHEMA_ERR" --set replicaCount=0
bad "replicaCount=three (string for a number)" "$SCHEMA_ERR" --set replicaCount=three
bad "resources.limits.memory=512M (not Mi/Gi)" "$SCHEMA_ERR" --set resources.limits.memory=512M
bad "resources.limits.memory=null"             "$SCHEMA_ERR" --set resources.limits.memory=null
bad "jvm.heapPercent=90 (> 75)"                "$SCHEMA_ERR" --set jvm.heapPercent=90
bad "jvm.directMemoryPercent=30 (> 25)"        "$SCHEMA_ERR" --set jvm.directMemoryPercent=30
bad "heap 75% + direct 10% (> 80%)"            "must be at most 80" --set jvm.heapPercent=75
bad "direct memory in jvm.extraOptions"        "$SCHEMA_ERR" --set-string jvm.extraOptions=-XX:MaxDirectMemorySize=1g
bad "jvm.extraOptions=-Xmx1g (heap twice)"     "$SCHEMA_ERR" --set jvm.extraOptions=-Xmx1g
bad "image.tag=latest"                         "$SCHEMA_ERR" --set image.tag=latest
bad "image.pullPolicy=Sometimes"               "$SCHEMA_ERR" --set image.pullPolicy=Sometimes
bad "an unknown top-level key"                 "$SCHEMA_ERR" --set replicas=3
bad "an unknown nested key"                    "$SCHEMA_ERR" --set persistence.sizee=1Gi
bad "service.type=Ingress"                     "$SCHEMA_ERR" --set service.type=Ingress
bad "podAntiAffinity.type=maybe"               "$SCHEMA_ERR" --set podAntiAffinity.type=maybe
bad "podDisruptionBudget.maxUnavailable=0"     "$SCHEMA_ERR" --set podDisruptionBudget.maxUnavailable=0
bad "cluster.secret shorter than 16 chars"     "$SCHEMA_ERR" --set cluster.secret=short
bad "cluster.discoveryRefreshInterval=soon"    "$SCHEMA_ERR" --set cluster.discoveryRefreshInterval=soon
bad "networkPolicy.enabled=yes (string)"       "$SCHEMA_ERR" --set-string networkPolicy.enabled=yes
bad "extraEnv overriding JAVA_TOOL_OPTIONS"    "$SCHEMA_ERR" --set 'extraEnv[0].name=JAVA_TOOL_OPTIONS' --set 'extraEnv[0].value=-Xmx4g'
bad "fullnameOverride longer than 52 chars"    "$SCHEMA_ERR" --set fullnameOverride=a-very-long-name-that-does-not-fit-a-statefulset-name-x
bad "a heap below 64MiB (limit 100Mi)"         "below 64MiB" --set resources.limits.memory=100Mi
bad "http and management on the same port"     "must differ" --set containerPorts.management=8080
bad "cluster and http on the same port"        "containerPorts.http and containerPorts.cluster must differ" --set containerPorts.cluster=8080
bad "cluster and management on the same port"  "containerPorts.cluster and containerPorts.management must differ" --set containerPorts.cluster=9090
bad "http moved onto the cluster port"         "containerPorts.http and containerPorts.cluster must differ" --set containerPorts.http=7070
bad "containerPorts.cluster=80 (privileged)"   "$SCHEMA_ERR" --set containerPorts.cluster=80
bad "containerPorts.cluster=70000"             "$SCHEMA_ERR" --set containerPorts.cluster=70000
bad "containerPorts.cluster=cluster (string)"  "$SCHEMA_ERR" --set containerPorts.cluster=cluster
bad "containerPorts.cluster=null (required)"   "$SCHEMA_ERR" --set containerPorts.cluster=null
bad "extraEnv overriding RINGKV_CLUSTER_PORT"  "$SCHEMA_ERR" --set 'extraEnv[0].name=RINGKV_CLUSTER_PORT' --set-string 'extraEnv[0].value=7071'
bad "extraEnv overriding RINGKV_CLUSTER_SECRET" "$SCHEMA_ERR" --set 'extraEnv[0].name=RINGKV_CLUSTER_SECRET' --set-string 'extraEnv[0].value=0123456789abcdef'
bad "extraEnv overriding RINGKV_CLUSTER_KUBERNETES_SECRET" "$SCHEMA_ERR" \
  --set 'extraEnv[0].name=RINGKV_CLUSTER_KUBERNETES_SECRET' --set-string 'extraEnv[0].value=other'
bad "loadtest.scenario=foo"                    "$SCHEMA_ERR" --set loadtest.scenario=foo
bad "loadtest.rate=-1"                         "$SCHEMA_ERR" --set loadtest.rate=-1
bad "loadtest.rate=0"                          "$SCHEMA_ERR" --set loadtest.rate=0
bad "loadtest.duration=soon"                   "$SCHEMA_ERR" --set loadtest.duration=soon
bad "loadtest.replicas=2of3"                   "$SCHEMA_ERR" --set loadtest.replicas=2of3
bad "loadtest.image.tag=latest"                "$SCHEMA_ERR" --set loadtest.image.tag=latest
bad "loadtest.fill=maybe"                      "$SCHEMA_ERR" --set loadtest.fill=maybe
bad "loadtest.maxErrorRate=2 (> 1)"            "$SCHEMA_ERR" --set loadtest.maxErrorRate=2
bad "loadtest.maxErrorRate=1.5 (a string > 1)" "$SCHEMA_ERR" --set loadtest.maxErrorRate=1.5
bad "loadtest.maxErrorRate empty"              "$SCHEMA_ERR" --set loadtest.maxErrorRate=
bad "loadtest.p99Ms=0"                         "$SCHEMA_ERR" --set loadtest.p99Ms=0
bad "loadtest.p99Ms=0.0 (a string, not > 0)"   "$SCHEMA_ERR" --set loadtest.p99Ms=0.0
bad "loadtest.env overriding SCENARIO"         "$SCHEMA_ERR" --set-string loadtest.env.SCENARIO=put
bad "loadtest.env with a number (not a string)" "$SCHEMA_ERR" --set loadtest.env.VUS=20
bad "an unknown loadtest key"                  "$SCHEMA_ERR" --set loadtest.rat=50
DEPARTURE_ERR='cluster.departure.timeout \(%s\) must be at least 10s below terminationGracePeriodSeconds \(%s\): a node removed by a scale-down must finish handing over its data before the kubelet kills it'
# shellcheck disable=SC2059
bad "cluster.departure.timeout=51s (less than 10s below the 60s grace period)" \
  "$(printf "$DEPARTURE_ERR" 51s 60)" --set cluster.departure.timeout=51s
# shellcheck disable=SC2059
bad "terminationGracePeriodSeconds=54 with the default 45s departure timeout" \
  "$(printf "$DEPARTURE_ERR" 45s 54)" --set terminationGracePeriodSeconds=54
# shellcheck disable=SC2059
bad "cluster.departure.timeout=600s (longer than the grace period)" \
  "$(printf "$DEPARTURE_ERR" 600s 60).*at least 610" --set cluster.departure.timeout=600s
must_succeed "accepts cluster.departure.timeout=50s (exactly 10s below the 60s grace period)" \
  "$HELM" template ringkv "$CHART" --set cluster.departure.timeout=50s
bad "cluster.departure.timeout=45 (a number)"  "$SCHEMA_ERR" --set cluster.departure.timeout=45
bad "cluster.departure.timeout=1m (not seconds)" "$SCHEMA_ERR" --set cluster.departure.timeout=1m
bad "cluster.departure.timeout=45000ms"        "$SCHEMA_ERR" --set cluster.departure.timeout=45000ms
bad "cluster.departure.timeout=0s"             "$SCHEMA_ERR" --set cluster.departure.timeout=0s
bad "cluster.departure.enabled=yes (string)"   "$SCHEMA_ERR" --set-string cluster.departure.enabled=yes
bad "an unknown cluster.departure key"         "$SCHEMA_ERR" --set cluster.departure.timout=45s
bad "extraEnv overriding RINGKV_CLUSTER_DEPARTURE_TIMEOUT" "$SCHEMA_ERR" \
  --set 'extraEnv[0].name=RINGKV_CLUSTER_DEPARTURE_TIMEOUT' --set-string 'extraEnv[0].value=600s'
bad "extraEnv overriding RINGKV_CLUSTER_DEPARTURE_STATEFUL_SET" "$SCHEMA_ERR" \
  --set 'extraEnv[0].name=RINGKV_CLUSTER_DEPARTURE_STATEFUL_SET' --set-string 'extraEnv[0].value=other'

# ---------------------------------------------------------------------------
# Node-to-node traffic moved off the public HTTP port to the cluster port: the HTTP internal
# endpoints (/internal/..., header X-Ringkv-Cluster-Secret) are gone (the public port answers 404
# there), and neither the chart (templates, NOTES, values, schema, tests) nor k8s/ nor any render
# may still describe or use them.
section "no trace of the removed HTTP internal endpoints"
INTERNAL_RE='/internal(/|[^a-z.]|$)|X-Ringkv-Cluster-Secret'
if grep -rInE --exclude-dir=loadtest -- "$INTERNAL_RE" "$CHART" "$K8S_DIR" >"$WORK/internal.out" 2>&1; then
  fail "helm/ringkv and k8s/ do not mention /internal/ or X-Ringkv-Cluster-Secret" "$WORK/internal.out"
else
  pass "helm/ringkv and k8s/ do not mention /internal/ or X-Ringkv-Cluster-Secret"
fi
if grep -iE -- "$INTERNAL_RE" "$WORK"/*.yaml >"$WORK/internal.out" 2>/dev/null; then
  fail "no render mentions /internal/ or X-Ringkv-Cluster-Secret" "$WORK/internal.out"
else
  pass "no render mentions /internal/ or X-Ringkv-Cluster-Secret"
fi

# ---------------------------------------------------------------------------
# The k6 load test (loadtest.*): the scripts reach the chart through the symlink
# files/loadtest -> ../../../loadtest, never as copies.
section "loadtest (k6 Job)"
LOADTEST_DIR="$ROOT/loadtest"
if [ -L "$CHART/files/loadtest" ] && [ "$(readlink -f "$CHART/files/loadtest")" = "$(readlink -f "$LOADTEST_DIR")" ]; then
  pass "helm/ringkv/files/loadtest is a symlink to loadtest/ (no copies to drift)"
else
  fail "helm/ringkv/files/loadtest is a symlink to loadtest/ (no copies to drift)"
fi

# loadtest_case NAME RELEASE NAMESPACE EXPECT_JSON [helm args...]
loadtest_case() {
  local name=$1 release=$2 namespace=$3 expect=$4; shift 4
  printf '   helm template %s -n %s %s\n' "$release" "$namespace" "$*"
  if "$HELM" template "$release" "$CHART" --namespace "$namespace" "$@" >"$WORK/$name.yaml" 2>"$WORK/$name.err"; then
    pass "helm template succeeds ($name)"
    run_checker loadtest "$WORK/$name.yaml" "$expect" "$LOADTEST_DIR"
  else
    fail "helm template succeeds ($name)" "$WORK/$name.err"
  fi
}

LT_DEFAULT='"enabled":true,"namespace":"default","fullname":"ringkv","servicePort":8080,"image":"grafana/k6:1.8.1",
 "scenario":"mixed","rate":"200","duration":"30s","replicas":"2/3","keyspace":"100000","valueSize":"1024",
 "p99Ms":"10","maxErrorRate":"0.01","fill":"none","activeDeadlineSeconds":900,"ttl":null'
if [ -s "$WORK/default.yaml" ]; then
  run_checker loadtest "$WORK/default.yaml" '{"enabled":false}' "$LOADTEST_DIR"
else
  fail "default chart render available (loadtest disabled)"
fi
loadtest_case loadtest-default ringkv default "{$LT_DEFAULT}" --set loadtest.enabled=true

cat >"$WORK/values-loadtest.yaml" <<'EOF'
fullnameOverride: kv
service:
  port: 80
networkPolicy:
  enabled: true
  allowSameNamespace: false
loadtest:
  enabled: true
  image:
    repository: ringkv-k6
    tag: "1.8.1"
  scenario: get
  rate: 50
  duration: 1m30s
  replicas: "3/3"
  keyspace: 1000000
  valueSize: 100
  p99Ms: 2.5
  maxErrorRate: 0.001
  fill: init
  env:
    READ_RATIO: "0.9"
    DISTRIBUTION: zipf
  activeDeadlineSeconds: 300
  ttlSecondsAfterFinished: 600
EOF
loadtest_case loadtest-custom rel kvns "$(cat <<EOF
{"enabled":true,"namespace":"kvns","fullname":"kv","servicePort":80,"image":"ringkv-k6:1.8.1",
 "scenario":"get","rate":"50","duration":"1m30s","replicas":"3/3","keyspace":"1000000","valueSize":"100",
 "p99Ms":"2.5","maxErrorRate":"0.001","fill":"init","env":{"READ_RATIO":"0.9","DISTRIBUTION":"zipf"},
 "activeDeadlineSeconds":300,"ttl":600,"networkPolicy":true}
EOF
)" -f "$WORK/values-loadtest.yaml"
# --set passes 12.5 and 0.05 as strings: the schema takes decimal strings for these two.
LT_SET=${LT_DEFAULT/\"fill\":\"none\"/\"fill\":\"done\"}
LT_SET=${LT_SET/\"p99Ms\":\"10\"/\"p99Ms\":\"12.5\"}
LT_SET=${LT_SET/\"maxErrorRate\":\"0.01\"/\"maxErrorRate\":\"0.05\"}
loadtest_case loadtest-set ringkv default "{$LT_SET}" \
  --set loadtest.enabled=true,loadtest.fill=done,loadtest.p99Ms=12.5,loadtest.maxErrorRate=0.05

# The Job's name follows its pod template (immutable) and the scripts, nothing else.
jobname() {
  "$HELM" template ringkv "$CHART" --set loadtest.enabled=true "$@" 2>/dev/null >"$WORK/jobname.yaml" || true
  "$PYTHON" "$WORK/check.py" jobname "$WORK/jobname.yaml"
}
base_job=$(jobname)
if [ -n "$base_job" ] && [ "$base_job" = "$(jobname --set replicaCount=5,persistence.size=5Gi)" ]; then
  pass "Job name unchanged by values outside loadtest (an upgrade leaves the finished Job alone)"
else
  fail "Job name unchanged by values outside loadtest (an upgrade leaves the finished Job alone)"
fi
if [ -n "$base_job" ] && [ "$base_job" != "$(jobname --set loadtest.rate=300)" ] \
    && [ "$base_job" != "$(jobname --set loadtest.image.tag=1.8.2)" ]; then
  pass "Job name changes with the loadtest values (an upgrade creates a new Job, no immutable-field error)"
else
  fail "Job name changes with the loadtest values (an upgrade creates a new Job, no immutable-field error)"
fi
long_job=$(jobname --set fullnameOverride=a-very-long-release-name-that-is-exactly-fifty-two-c)
if [ ${#long_job} -le 63 ] && [[ $long_job == a-very-long-release-name-that-is-exactly-fift-loadtest-* ]]; then
  pass "Job name of a 52-char fullname fits 63 chars ($long_job)"
else
  fail "Job name of a 52-char fullname fits 63 chars ($long_job)"
fi

# helm package follows the symlink and stores the three scripts (and only them) as real files.
mkdir -p "$WORK/pkg"
if "$HELM" package "$CHART" -d "$WORK/pkg" >"$WORK/pkg.out" 2>&1; then
  pass "helm package succeeds"
  tgz=$(ls "$WORK"/pkg/*.tgz)
  listed=$(tar tzf "$tgz" | grep '/files/' | sort | xargs)
  want="ringkv/files/loadtest/fill.js ringkv/files/loadtest/kv.js ringkv/files/loadtest/lib.js"
  if [ "$listed" = "$want" ]; then
    pass "packaged chart has exactly files/loadtest/{fill,kv,lib}.js (.helmignore keeps the rest of loadtest/ out)"
  else
    printf '%s\n' "$listed" >"$WORK/detail"
    fail "packaged chart has exactly files/loadtest/{fill,kv,lib}.js (.helmignore keeps the rest of loadtest/ out)" "$WORK/detail"
  fi
  same=1
  for script in fill.js kv.js lib.js; do
    tar xzf "$tgz" -O "ringkv/files/loadtest/$script" 2>/dev/null | cmp -s - "$LOADTEST_DIR/$script" || same=0
  done
  if [ $same = 1 ]; then pass "packaged scripts are byte-identical to loadtest/"; else fail "packaged scripts are byte-identical to loadtest/"; fi
else
  fail "helm package succeeds" "$WORK/pkg.out"
fi

# ---------------------------------------------------------------------------
section "k8s/ kustomize base"
if [ -z "$KUBECTL" ] || ! command -v "$KUBECTL" >/dev/null 2>&1; then
  skip "kubectl not found: kustomize render of k8s/ not checked"
elif ! "$KUBECTL" kustomize "$K8S_DIR" >"$WORK/kustomize.yaml" 2>"$WORK/kustomize.err"; then
  fail "kubectl kustomize k8s/" "$WORK/kustomize.err"
else
  pass "kubectl kustomize k8s/"
  if [ -s "$WORK/default.yaml" ]; then
    run_checker compare "$WORK/default.yaml" "$WORK/kustomize.yaml"
  else
    fail "default chart render available for comparison"
  fi
  if grep -q '^kind: Job$' "$WORK/kustomize.yaml"; then
    fail "the base has no Job: applying it starts no load test"
  else
    pass "the base has no Job: applying it starts no load test"
  fi
  # An overlay as kustomization.yaml suggests: its own namespace, its own secret. The base is
  # namespace-less, so the RoleBinding's subject must follow that namespace; and the Role must still
  # name the StatefulSet and the generated Secret (kustomize writes a generated Secret's hashed name
  # into every Role's resourceNames that match the Secret's, which is why the overlay's Secret has
  # another name).
  mkdir -p "$WORK/overlay"
  head -c 24 /dev/urandom | base64 >"$WORK/overlay/cluster-secret.txt"
  cat >"$WORK/overlay/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: kvns
resources:
  - $("$PYTHON" -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$K8S_DIR" "$WORK/overlay")
secretGenerator:
  - name: ringkv-cluster-secret
    files:
      - cluster-secret=cluster-secret.txt
patches:
  - target:
      kind: StatefulSet
      name: ringkv
    patch: |-
      - op: add
        path: /spec/template/spec/containers/0/env/-
        value:
          name: RINGKV_CLUSTER_SECRET
          valueFrom:
            secretKeyRef:
              name: ringkv-cluster-secret
              key: cluster-secret
EOF
  if "$KUBECTL" kustomize "$WORK/overlay" >"$WORK/kustomize-overlay.yaml" 2>"$WORK/kustomize-overlay.err"; then
    pass "kubectl kustomize of an overlay of k8s/ (namespace kvns, its own secret)"
    run_checker rbac-namespace "$WORK/kustomize-overlay.yaml" kvns "$WORK/overlay/cluster-secret.txt"
  else
    fail "kubectl kustomize of an overlay of k8s/ (namespace kvns, its own secret)" "$WORK/kustomize-overlay.err"
  fi
fi
# The base ships no secret, not even a placeholder: the first node makes it (comments may show how an
# overlay adds one).
run_checker k8s-no-secret "$K8S_DIR"
if [ -n "$KUBECTL" ] && command -v "$KUBECTL" >/dev/null 2>&1; then
  # k8s/loadtest reads the scripts from loadtest/ itself, which needs LoadRestrictionsNone.
  if ! "$KUBECTL" kustomize --load-restrictor LoadRestrictionsNone "$K8S_DIR/loadtest" \
      >"$WORK/kustomize-loadtest.yaml" 2>"$WORK/kustomize-loadtest.err"; then
    fail "kubectl kustomize --load-restrictor LoadRestrictionsNone k8s/loadtest" "$WORK/kustomize-loadtest.err"
  else
    pass "kubectl kustomize --load-restrictor LoadRestrictionsNone k8s/loadtest"
    if [ -s "$WORK/loadtest-default.yaml" ]; then
      run_checker compare-loadtest "$WORK/loadtest-default.yaml" "$WORK/kustomize-loadtest.yaml"
    else
      fail "chart render with loadtest.enabled=true available for comparison"
    fi
  fi
fi

# ---------------------------------------------------------------------------
# The helm test script itself, run with busybox against a tiny mock of the
# ringkv API (skipped when busybox is not installed).
section "helm test script (busybox + mock API)"
BUSYBOX="${BUSYBOX:-$(command -v busybox || true)}"
if [ -z "$BUSYBOX" ]; then
  skip "busybox not found: helm test script not exercised"
elif [ ! -s "$WORK/default.yaml" ]; then
  fail "default chart render available for the test script"
else
  "$PYTHON" - "$WORK/default.yaml" >"$WORK/test-script.sh" <<'PY'
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d.get("kind") == "Pod" and (d["metadata"].get("annotations") or {}).get("helm.sh/hook") == "test":
        c = d["spec"]["containers"][0]
        sys.stdout.write((c.get("command", []) + c.get("args", []))[-1])
PY
  mkdir -p "$WORK/bb"
  for applet in sh nc wget head tr sleep date printf cat; do ln -sf "$BUSYBOX" "$WORK/bb/$applet"; done
  cat >"$WORK/mock.py" <<'PY'
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

mode, port_file = sys.argv[1], sys.argv[2]
store = {}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def key(self):
        return parse_qs(urlparse(self.path).query).get("id", [None])[0]

    def send(self, code, body=b""):
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = urlparse(self.path).path
        if path == "/v0/status":
            return self.send(200, b"OK")
        if path == "/v0/entity" and self.key() in store:
            body = store[self.key()]
            return self.send(200, body[::-1] if mode == "corrupt" else body)
        self.send(404)

    def do_PUT(self):
        store[self.key()] = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send(201)

    def do_DELETE(self):
        store.pop(self.key(), None)
        self.send(202)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file, "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
PY
  # run_hook MODE: runs the hook script against a mock in MODE; returns its exit code.
  run_hook() {
    local mode=$1 rc=0
    rm -f "$WORK/mock.port"
    "$PYTHON" "$WORK/mock.py" "$mode" "$WORK/mock.port" &
    MOCK_PID=$!
    for _ in $(seq 1 50); do [ -s "$WORK/mock.port" ] && break; sleep 0.1; done
    env -i PATH="$WORK/bb" RINGKV_HOST=127.0.0.1 RINGKV_PORT="$(cat "$WORK/mock.port")" \
      "$WORK/bb/sh" -c "$(cat "$WORK/test-script.sh")" >"$WORK/hook-$mode.out" 2>&1 || rc=$?
    kill "$MOCK_PID" 2>/dev/null || true
    wait "$MOCK_PID" 2>/dev/null || true
    MOCK_PID=""
    return "$rc"
  }
  if run_hook ok && grep -q '^PASS$' "$WORK/hook-ok.out"; then
    pass "test script: PUT 201, GET same value, DELETE 202 against a correct server"
  else
    fail "test script: PUT 201, GET same value, DELETE 202 against a correct server" "$WORK/hook-ok.out"
  fi
  if run_hook corrupt; then
    fail "test script fails when GET returns a different value" "$WORK/hook-corrupt.out"
  elif grep -q 'FAIL: GET' "$WORK/hook-corrupt.out"; then
    pass "test script fails when GET returns a different value"
  else
    fail "test script fails when GET returns a different value (wrong reason)" "$WORK/hook-corrupt.out"
  fi
fi

section "monitoring objects"; if HELM="$HELM" PYTHON="$PYTHON" "$HERE/checks/monitoring.sh"; then pass "helm/checks/monitoring.sh"; else fail "helm/checks/monitoring.sh"; fi

# ---------------------------------------------------------------------------
section "summary"
echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
if [ "$FAILED" -gt 0 ]; then
  printf 'failed checks:\n'
  printf '  - %s\n' "${FAILED_NAMES[@]}"
  exit 1
fi
echo "all checks passed"
