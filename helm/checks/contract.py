"""The application contract of the ringkv chart's renders, which helm lint and the Kubernetes schemas
cannot know: the ports, the cluster secret, the heap against the memory limit, the RBAC of the nodes'
API calls, the NetworkPolicy, the k6 loadtest Job. helm/verify.sh renders the chart and runs

  contract.py render FILE EXPECT_JSON            contract checks of one render
  contract.py np-teeth FILE EXPECT_JSON          the NetworkPolicy checks fail on broken copies of a render
  contract.py rbac-teeth FILE EXPECT_JSON        the RBAC checks fail on broken copies of a render
  contract.py rbac-namespace FILE NAMESPACE SECRET_FILE
                                                 k8s/'s Role/RoleBinding under an overlay with its own secret
  contract.py k8s-no-secret DIR                  no Secret, secretGenerator or secret literal in DIR
  contract.py schema-coverage VALUES.yaml SCHEMA.json
  contract.py image-heap DOCKERFILE VALUES.yaml  the image sizes its heap as jvm.heapPercent says
  contract.py loadtest FILE EXPECT_JSON LOADTEST_DIR   the loadtest Job/ConfigMap of one render
  contract.py jobname FILE                       prints the loadtest Job's name (or nothing)
  contract.py hook-script FILE                   prints the helm test hook's shell script

and prints "PASS<TAB>name" / "FAIL<TAB>name<TAB>detail" lines. Unit tests: test_contract.py.
"""
import base64
import copy
import hashlib
import json
import os
import re
import sys
import traceback

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

    # -- Kubernetes API access: each discovery round a node reads its own StatefulSet's spec.replicas for
    # the ring's members (cluster.membershipFromStatefulSet), and on SIGTERM to know whether a scale-down
    # removes it (cluster.departure); on start it reads, or first creates, the generated cluster secret
    roles, bindings = kinds("Role"), kinds("RoleBinding")
    departure_env = [n for n in env_names if n.startswith("RINGKV_CLUSTER_DEPARTURE_")]
    membership = exp.get("membership", True)
    sts_name = sts["metadata"]["name"]
    want_rules, granted = [], []
    if exp["departure"] or membership:
        want_rules.append({"apiGroups": ["apps"], "resources": ["statefulsets"], "resourceNames": [sts_name],
                           "verbs": ["get"]})
        granted.append("get on statefulsets/%s (apps)" % sts_name)
    if source == "generated":
        want_rules += [{"apiGroups": [""], "resources": ["secrets"], "resourceNames": [exp["fullname"]], "verbs": ["get"]},
                       {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]}]
        granted.append("get on secrets/%s, create on secrets" % exp["fullname"])
    if want_rules:
        why = " and ".join(w for w, on in (("membership", membership), ("departure", exp["departure"]),
                                           ("the generated secret", source == "generated")) if on)
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
        check("rbac: no Role and no RoleBinding (membership and departure off, secret given)", not roles and not bindings,
              [(d["kind"], d["metadata"]["name"]) for d in roles + bindings])
        check("rbac: pod automountServiceAccountToken = serviceAccount.automount (%s)" % json.dumps(sa_automount),
              pod.get("automountServiceAccountToken") is sa_automount, pod.get("automountServiceAccountToken"))
    if membership:
        check("membership: RINGKV_CLUSTER_DISCOVERY_STATEFUL_SET = the StatefulSet's own name (%s)" % sts_name,
              val("RINGKV_CLUSTER_DISCOVERY_STATEFUL_SET") == sts_name, val("RINGKV_CLUSTER_DISCOVERY_STATEFUL_SET"))
    else:
        check("membership off: no RINGKV_CLUSTER_DISCOVERY_STATEFUL_SET", "RINGKV_CLUSTER_DISCOVERY_STATEFUL_SET" not in env_names)
    drain = val("RINGKV_SHUTDOWN_DRAIN_DELAY")
    want_drain = exp.get("drainDelay", "5s")
    check("shutdown: RINGKV_SHUTDOWN_DRAIN_DELAY = %s" % want_drain, drain == want_drain, drain)
    drain_s = int(drain[:-1]) if re.fullmatch(r"[0-9]+s", str(drain or "")) else 0
    if exp["departure"]:
        check("departure: RINGKV_CLUSTER_DEPARTURE_STATEFUL_SET = the StatefulSet's own name (%s)" % sts_name,
              val("RINGKV_CLUSTER_DEPARTURE_STATEFUL_SET") == sts_name, val("RINGKV_CLUSTER_DEPARTURE_STATEFUL_SET"))
        timeout = val("RINGKV_CLUSTER_DEPARTURE_TIMEOUT")
        check("departure: RINGKV_CLUSTER_DEPARTURE_TIMEOUT = %s" % exp["departure"], timeout == exp["departure"], timeout)
        m = re.fullmatch(r"([1-9][0-9]*)s", str(timeout or ""))
        grace_s = pod.get("terminationGracePeriodSeconds")
        check("departure: timeout %s and drain %ss at least 10s below terminationGracePeriodSeconds (%s)"
              % (timeout, drain_s, grace_s),
              m and isinstance(grace_s, int) and int(m.group(1)) + drain_s + 10 <= grace_s, (timeout, drain_s, grace_s))
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
def image_heap(dockerfile_path, values_path):
    """The chart's jvm.heapPercent decides the heap; the image, which cannot know the memory limit it
    will run under, gives the heap the same share of it (-XX:MaxRAMPercentage)."""
    with open(values_path) as f:
        percent = g(yaml.safe_load(f), "jvm", "heapPercent")
    with open(dockerfile_path) as f:
        opts = re.findall(r'^ENV JAVA_TOOL_OPTIONS="([^"]*)"', f.read(), re.M)
    shares = re.findall(r"-XX:MaxRAMPercentage=([0-9.]+)(?=\s|$)", opts[0] if len(opts) == 1 else "")
    check("the image's JAVA_TOOL_OPTIONS sizes the heap once, with -XX:MaxRAMPercentage",
          len(opts) == 1 and len(shares) == 1 and not re.search(r"-Xmx|MaxHeapSize|MaxRAM=", opts[0]), opts)
    check("the image's -XX:MaxRAMPercentage = jvm.heapPercent of values.yaml (%s)" % percent,
          len(shares) == 1 and float(shares[0]) == percent, shares)


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


def catches(path, exp, broken):
    """broken: {check name: (mutate, failure)}. Each check passes when render_checks, run on a copy of the
    render at path that mutate(docs) broke, fails a check whose name failure(name) recognises."""
    global OUT
    good = load(path)
    results = []
    for name, (mutate, failure) in broken.items():
        docs = copy.deepcopy(good)
        mutate(docs)
        OUT = []
        render_checks(path, exp, docs)
        failed = [n for ok, n, _ in OUT if not ok]
        results.append((name, any(failure(n) for n in failed), failed))
    OUT = [(bool(ok), name, "" if ok else str(detail)) for name, ok, detail in results]


def np_teeth(path, exp):
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
    catches(path, exp, {"the NetworkPolicy checks catch a cluster port open to %s" % what:
                        (lambda docs, m=mutate: m([d for d in docs if d.get("kind") == "NetworkPolicy"][0]),
                         lambda n, e=expect: "cluster port" in n and e in n)
                        for what, (mutate, expect) in broken.items()})


def rbac_teeth(path, exp):
    """The RBAC checks must fail on copies of a good render (departure on, generated secret) whose Role grants
    more than `get` on the one StatefulSet, `get` on the one Secret and `create` on Secrets, or less, or whose
    RoleBinding names someone else: otherwise they would prove nothing."""

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
    catches(path, exp, {"the RBAC checks catch %s" % what:
                        (mutate, lambda n, e=expect: n.startswith("rbac:") and e in n)
                        for what, (mutate, expect) in broken.items()})


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


def hook_script(path):
    """Prints the shell script of the helm test hook Pod, for running it outside Kubernetes."""
    for d in load(path):
        if d.get("kind") == "Pod" and g(d, "metadata", "annotations", "helm.sh/hook") == "test":
            c = d["spec"]["containers"][0]
            sys.stdout.write((c.get("command", []) + c.get("args", []))[-1])


def job_name(path):
    names = [d["metadata"]["name"] for d in load(path) if d.get("kind") == "Job"]
    print(names[0] if len(names) == 1 else "")


MODES = {
    "render": lambda path, exp: render_checks(path, json.loads(exp)),
    "np-teeth": lambda path, exp: np_teeth(path, json.loads(exp)),
    "rbac-teeth": lambda path, exp: rbac_teeth(path, json.loads(exp)),
    "rbac-namespace": rbac_namespace,
    "loadtest": lambda path, exp, scripts_dir: loadtest_checks(path, json.loads(exp), scripts_dir),
    "k8s-no-secret": k8s_no_secret,
    "schema-coverage": schema_coverage,
    "image-heap": image_heap,
}
# Modes that print what verify.sh asked for instead of checks.
PRINTS = {"jobname": job_name, "hook-script": hook_script}


def main(argv):
    mode, args = argv[1], argv[2:]
    if mode in PRINTS:
        PRINTS[mode](*args)
        return
    try:
        MODES[mode](*args)
    except Exception:  # a crash is a failed check, not a silent pass
        check("checker ran without error", False, traceback.format_exc())
    emit()


if __name__ == "__main__":
    main(sys.argv)
