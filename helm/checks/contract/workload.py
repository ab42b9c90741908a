"""The release's objects, the StatefulSet and its Services, the ringkv container (image, ports, env,
probes, security context), the disruption budget and the scheduling rules."""
import re

from .manifests import DNS1035_LABEL, DNS1123_LABEL, g, subset
from .report import check

DURATION = re.compile(r"^([0-9]+(ns|us|ms|s|m|h|d)|-?P[0-9TDHMS.,]+)$")

# The kinds of the chart that are in no namespace: the Node reader of cluster.zones.fromNodeLabel.
CLUSTER_SCOPED = ("ClusterRole", "ClusterRoleBinding")


def check_objects(r):
    docs, exp = r.docs, r.exp
    bad = [d for d in docs if not (d.get("apiVersion") and d.get("kind") and g(d, "metadata", "name"))]
    check("every object has apiVersion, kind and metadata.name", not bad, bad)
    names = [(d["kind"], d["metadata"]["name"]) for d in docs]
    check("object names are DNS-1123 labels (<= 63 chars)",
          all(DNS1123_LABEL.match(n) and len(n) <= 63 for _, n in names), names)
    check("objects are in namespace %s (cluster-scoped ones, %s, in none)" % (exp["namespace"], ", ".join(CLUSTER_SCOPED)),
          all(g(d, "metadata", "namespace") == (None if d["kind"] in CLUSTER_SCOPED else exp["namespace"]) for d in docs),
          [(k, n, g(d, "metadata", "namespace")) for (k, n), d in zip(names, docs)])
    # With tests on, the helm test's script is a ConfigMap of the release (see hooktest.py), and so is
    # the script with which its pod first waits for the release (wait-for-release.js).
    kinds = sorted(exp["kinds"] + (["ConfigMap", "ConfigMap"] if exp["tests"] else []))
    check("object kinds = %s" % kinds, sorted(d["kind"] for d in r.main) == kinds, sorted(d["kind"] for d in r.main))


def check_statefulset(r):
    sts, spec, exp = r.sts, r.spec, r.exp
    check("StatefulSet name is %s" % exp["fullname"], sts["metadata"]["name"] == exp["fullname"],
          sts["metadata"]["name"])
    check("StatefulSet name <= 52 chars (controller-revision-hash label fits)", len(sts["metadata"]["name"]) <= 52)
    check("replicas = %d" % exp["replicas"], spec.get("replicas") == exp["replicas"], spec.get("replicas"))
    check("podManagementPolicy = Parallel", spec.get("podManagementPolicy") == "Parallel",
          spec.get("podManagementPolicy"))
    check("StatefulSet selector matches the pod template labels",
          subset(g(spec, "selector", "matchLabels"), r.pod_labels))


def _has_port(service_spec, name, port, target_ports):
    return any(p.get("name") == name and p.get("port") == port and p.get("targetPort") in target_ports
               for p in service_spec.get("ports", []))


def check_services(r):
    exp, services = r.exp, r.services
    check("Service names are DNS-1035 labels", all(DNS1035_LABEL.match(n) for n in services), list(services))
    check("serviceName (%s) is a rendered Service" % r.headless_name, r.headless is not None, list(services))
    if r.headless:
        hs = r.headless["spec"]
        check("headless Service: clusterIP None", hs.get("clusterIP") == "None", hs.get("clusterIP"))
        check("headless Service: publishNotReadyAddresses true", hs.get("publishNotReadyAddresses") is True)
        check("headless Service: port %d named http -> targetPort http" % exp["httpPort"],
              _has_port(hs, "http", exp["httpPort"], ("http", exp["httpPort"])), hs.get("ports"))
        check("headless Service: port %d named cluster -> targetPort cluster (peers connect to <pod>.<headless>:%d)"
              % (exp["clusterPort"], exp["clusterPort"]),
              _has_port(hs, "cluster", exp["clusterPort"], ("cluster", exp["clusterPort"])), hs.get("ports"))
        check("headless Service selects the pods", subset(hs.get("selector"), r.pod_labels))
    client = services.get(exp["fullname"])
    check("client Service %s exists" % exp["fullname"], client is not None, list(services))
    if client:
        cs = client["spec"]
        check("client Service: type ClusterIP, not headless",
              cs.get("type", "ClusterIP") == "ClusterIP" and cs.get("clusterIP") != "None")
        check("client Service: port %d named http -> targetPort http" % exp["servicePort"],
              _has_port(cs, "http", exp["servicePort"], ("http",)), cs.get("ports"))
        check("client Service selects the pods", subset(cs.get("selector"), r.pod_labels))
        check("client Service exposes only http (not the cluster or management port)",
              [p.get("targetPort") for p in cs.get("ports", [])] == ["http"], cs.get("ports"))


def check_container(r):
    c, exp, ports = r.container, r.exp, r.ports
    repo, _, tag = r.image.rpartition(":")
    check("image = ringkv:%s (never latest)" % exp["imageTag"],
          repo == "ringkv" and tag == exp["imageTag"] and tag != "latest", r.image)
    check("imagePullPolicy IfNotPresent", c.get("imagePullPolicy") == "IfNotPresent", c.get("imagePullPolicy"))
    check("container ports http=%d, cluster=%d, management=%d" % (exp["httpPort"], exp["clusterPort"], exp["managementPort"]),
          ports == {"http": exp["httpPort"], "cluster": exp["clusterPort"], "management": exp["managementPort"]}, ports)
    check("container ports are TCP and all differ",
          len(set(ports.values())) == len(c.get("ports", [])) == 3
          and all(p.get("protocol", "TCP") == "TCP" for p in c.get("ports", [])), c.get("ports"))


def check_env(r):
    exp, env, env_names, val = r.exp, r.env, r.env_names, r.val
    check("env names are unique", len(env_names) == len(set(env_names)), env_names)
    check("POD_NAME from the downward API (metadata.name)",
          g(env, "POD_NAME", "valueFrom", "fieldRef", "fieldPath") == "metadata.name")
    check("POD_NAMESPACE from the downward API (metadata.namespace)",
          g(env, "POD_NAMESPACE", "valueFrom", "fieldRef", "fieldPath") == "metadata.namespace")
    refs_ok = all(ref in env_names[:i] for i, e in enumerate(r.env_list)
                  for ref in re.findall(r"\$\((\w+)\)", str(e.get("value", ""))))
    check("$(VAR) references only point to env vars defined earlier", refs_ok)
    check("SERVER_PORT = %d" % exp["httpPort"], val("SERVER_PORT") == str(exp["httpPort"]), val("SERVER_PORT"))
    check("MANAGEMENT_SERVER_PORT = %d" % exp["managementPort"],
          val("MANAGEMENT_SERVER_PORT") == str(exp["managementPort"]), val("MANAGEMENT_SERVER_PORT"))
    check("RINGKV_CLUSTER_PORT = %d (containerPorts.cluster, the container port named cluster)" % exp["clusterPort"],
          val("RINGKV_CLUSTER_PORT") == str(exp["clusterPort"]) == str(r.ports.get("cluster")), val("RINGKV_CLUSTER_PORT"))
    check("RINGKV_DATA_DIR = /var/lib/ringkv", val("RINGKV_DATA_DIR") == "/var/lib/ringkv", val("RINGKV_DATA_DIR"))
    dns = "%s.$(POD_NAMESPACE).svc.%s" % (r.headless_name, exp["clusterDomain"])
    check("RINGKV_CLUSTER_DISCOVERY_DNS_NAME = <headless Service>.$(POD_NAMESPACE).svc.%s" % exp["clusterDomain"],
          val("RINGKV_CLUSTER_DISCOVERY_DNS_NAME") == dns and r.headless is not None,
          "%s != %s" % (val("RINGKV_CLUSTER_DISCOVERY_DNS_NAME"), dns))
    scheme = "https" if exp["tls"] else "http"
    self_url = "%s://$(POD_NAME).%s:%d" % (scheme, dns, exp["httpPort"])
    check("RINGKV_CLUSTER_SELF = %s://$(POD_NAME).<discovery name>:%d (tls.enabled: the peers' scheme too)"
          % (scheme, exp["httpPort"]),
          val("RINGKV_CLUSTER_SELF") == self_url, "%s != %s" % (val("RINGKV_CLUSTER_SELF"), self_url))
    for n in ("RINGKV_CLUSTER_DISCOVERY_REFRESH_INTERVAL", "RINGKV_REPLICATION_TIMEOUT"):
        check("%s is a duration" % n, DURATION.match(str(val(n) or "")), val(n))
    check("RINGKV_REPLICATION_FACTOR is a whole number of at least 1",
          re.match(r"^[1-9][0-9]*$", str(val("RINGKV_REPLICATION_FACTOR") or "")), val("RINGKV_REPLICATION_FACTOR"))


def check_probes(r):
    def probe_port(p):
        port = g(p, "httpGet", "port")
        return r.ports.get(port) if isinstance(port, str) else port

    for kind, path in (("startupProbe", "/actuator/health/liveness"),
                       ("livenessProbe", "/actuator/health/liveness"),
                       ("readinessProbe", "/actuator/health/readiness")):
        p = r.container.get(kind)
        scheme = "HTTPS" if r.exp["tls"] else "HTTP"
        check("%s: GET %s on the management port (%d) over %s" % (kind, path, r.exp["managementPort"], scheme),
              p and g(p, "httpGet", "path") == path and probe_port(p) == r.exp["managementPort"]
              and g(p, "httpGet", "scheme", default="HTTP") == scheme, p)


def check_security(r):
    pod = r.pod
    psc = pod.get("securityContext") or {}
    csc = r.container.get("securityContext") or {}
    check("pod securityContext: runAsNonRoot, runAsUser 10001, fsGroup 10001",
          psc.get("runAsNonRoot") is True and psc.get("runAsUser") == 10001 and psc.get("fsGroup") == 10001, psc)
    check("container securityContext: readOnlyRootFilesystem true", csc.get("readOnlyRootFilesystem") is True)
    check("container securityContext: allowPrivilegeEscalation false", csc.get("allowPrivilegeEscalation") is False)
    check("container securityContext: capabilities drop ALL", "ALL" in (g(csc, "capabilities", "drop") or []))
    check("container securityContext: seccompProfile RuntimeDefault",
          g(csc, "seccompProfile", "type", default=g(psc, "seccompProfile", "type")) == "RuntimeDefault")
    check("container runs as non-root uid 10001",
          csc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True and csc.get("runAsUser", psc.get("runAsUser")) == 10001)
    grace = r.exp.get("terminationGracePeriodSeconds", 60)
    check("terminationGracePeriodSeconds = %d" % grace, pod.get("terminationGracePeriodSeconds") == grace,
          pod.get("terminationGracePeriodSeconds"))


def check_disruption_and_scheduling(r):
    pdbs = r.kinds("PodDisruptionBudget")
    check("PodDisruptionBudget maxUnavailable 1, selects the pods",
          len(pdbs) == 1 and g(pdbs[0], "spec", "maxUnavailable") == 1
          and subset(g(pdbs[0], "spec", "selector", "matchLabels"), r.pod_labels), pdbs)
    aff = g(r.pod, "affinity", "podAntiAffinity") or {}
    if r.exp["antiAffinity"] == "soft":
        terms = aff.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        check("soft pod anti-affinity on the pods' labels",
              terms and subset(g(terms[0], "podAffinityTerm", "labelSelector", "matchLabels"), r.pod_labels)
              and not aff.get("requiredDuringSchedulingIgnoredDuringExecution"), aff)
    elif r.exp["antiAffinity"] == "hard":
        terms = aff.get("requiredDuringSchedulingIgnoredDuringExecution") or []
        check("hard pod anti-affinity on the pods' labels",
              terms and subset(g(terms[0], "labelSelector", "matchLabels"), r.pod_labels), aff)
    else:
        check("no pod anti-affinity", not aff, aff)
    tsc = r.pod.get("topologySpreadConstraints") or []
    if r.exp["spread"]:
        check("topologySpreadConstraints select the pods",
              tsc and all(subset(g(t, "labelSelector", "matchLabels"), r.pod_labels) for t in tsc), tsc)
    else:
        check("no topologySpreadConstraints", not tsc, tsc)
