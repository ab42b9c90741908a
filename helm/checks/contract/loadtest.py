"""The k6 load test (loadtest.*): one Job, not a hook, named after its pod template and scripts; a
ConfigMap holding loadtest/'s scripts byte for byte; the values in the env; a locked-down pod that no
Service, PodDisruptionBudget or StatefulSet selects, and that the NetworkPolicy lets in."""
import json
import re

from .manifests import DNS1123_LABEL, g, load, of_kind, release_selectors, subset
from .report import check

SCRIPTS = ("fill.js", "kv.js", "lib.js")


def is_loadtest(d):
    return g(d, "metadata", "labels", "app.kubernetes.io/component") == "loadtest"


def loadtest_checks(docs, exp, scripts_dir):
    jobs = of_kind(docs, "Job")
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
    check_job_metadata(job, cm, exp)
    check_scripts(cm, scripts_dir)
    spec = job.get("spec") or {}
    pod = g(spec, "template", "spec") or {}
    ctrs = pod.get("containers") or []
    check("one container, k6", [c.get("name") for c in ctrs] == ["k6"], [c.get("name") for c in ctrs])
    if not ctrs:
        return
    check_k6(ctrs[0], pod, cm, exp)
    check_env(ctrs[0], docs, exp)
    check_fill_and_job(ctrs[0], spec, exp)
    check_isolation(ctrs[0], spec, docs, exp)


def check_job_metadata(job, cm, exp):
    name = job["metadata"]["name"]
    check("Job is not a hook (helm install/upgrade creates it)",
          "helm.sh/hook" not in (g(job, "metadata", "annotations") or {}), g(job, "metadata", "annotations"))
    prefix = exp["fullname"][:45].rstrip("-") + "-loadtest-"
    check("Job name %s<8 hex>, a DNS label <= 63 chars" % prefix,
          name.startswith(prefix) and re.fullmatch(r"[0-9a-f]{8}", name[len(prefix):])
          and len(name) <= 63 and DNS1123_LABEL.match(name), name)
    check("objects are in namespace %s" % exp["namespace"],
          g(job, "metadata", "namespace") == exp["namespace"] and g(cm, "metadata", "namespace") == exp["namespace"])


def check_scripts(cm, scripts_dir):
    """The ConfigMap holds the files of loadtest/, byte for byte."""
    data = cm.get("data") or {}
    check("ConfigMap holds exactly %s" % ", ".join(SCRIPTS), sorted(data) == sorted(SCRIPTS), sorted(data))
    for script in SCRIPTS:
        with open("%s/%s" % (scripts_dir, script), "rb") as f:
            want = f.read()
        got = data.get(script)
        check("ConfigMap %s is byte-identical to loadtest/%s" % (script, script),
              got is not None and got.encode() == want,
              "missing" if got is None else "%d bytes, loadtest/%s has %d" % (len(got.encode()), script, len(want)))


def check_k6(c, pod, cm, exp):
    """k6 runs the script from the ConfigMap, writing nowhere but /tmp."""
    check("k6 image = %s" % exp["image"], c.get("image") == exp["image"], c.get("image"))
    check("imagePullPolicy IfNotPresent", c.get("imagePullPolicy") == "IfNotPresent", c.get("imagePullPolicy"))
    args = c.get("args") or []
    check("k6 runs /scripts/kv.js with the image's entrypoint (args: run ... /scripts/kv.js)",
          not c.get("command") and args[:1] == ["run"] and args[-1:] == ["/scripts/kv.js"], (c.get("command"), args))
    vols = {v["name"]: v for v in pod.get("volumes") or []}
    mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts") or []}
    check("/scripts is the loadtest ConfigMap (%s)" % cm["metadata"]["name"],
          g(vols.get(mounts.get("/scripts")), "configMap", "name") == cm["metadata"]["name"], (mounts, vols))
    check("/tmp is an emptyDir", "emptyDir" in (vols.get(mounts.get("/tmp")) or {}), (mounts, vols))


def check_env(c, docs, exp):
    env_list = c.get("env") or []
    names = [e["name"] for e in env_list]
    env = {e["name"]: e.get("value") for e in env_list}
    check("env names are unique", len(names) == len(set(names)), names)
    services = {d["metadata"]["name"]: d for d in of_kind(docs, "Service")}
    client = services.get(exp["fullname"])
    url = "%s://%s:%d" % ("https" if exp["tls"] else "http", exp["fullname"], exp["servicePort"])
    check("BASE_URL = %s, the client Service and its port" % url,
          env.get("BASE_URL") == url and client is not None
          and any(p.get("port") == exp["servicePort"] for p in g(client, "spec", "ports", default=[])),
          (env.get("BASE_URL"), list(services)))
    want = {"SCENARIO": exp["scenario"], "RATE": exp["rate"], "DURATION": exp["duration"],
            "REPLICAS": exp["replicas"], "KEYSPACE": exp["keyspace"], "DISTRIBUTION": exp["distribution"],
            "VALUE_SIZE": exp["valueSize"],
            "P99_MS": exp["p99Ms"], "MAX_ERROR_RATE": exp["maxErrorRate"],
            "FILLED": "0" if exp["fill"] == "none" else "1", "SUMMARY_JSON": "none",
            "K6_NO_USAGE_REPORT": "true"}
    want.update(exp.get("env", {}))
    got = {k: env.get(k) for k in want}
    check("env carries the values: %s" % " ".join("%s=%s" % kv for kv in sorted(want.items())),
          got == want, {k: (got[k], v) for k, v in want.items() if got[k] != v})
    token = g(next((e for e in env_list if e["name"] == "RINGKV_TOKEN"), {}), "valueFrom", "secretKeyRef")
    if exp["security"]:
        want_ref = {"name": "%s-tokens" % exp["fullname"], "key": "admin-token"}
        check("RINGKV_TOKEN from %s/admin-token (lib.js sends it as a Bearer token)" % want_ref["name"],
              token == want_ref, token)
    else:
        check("security off: no RINGKV_TOKEN", "RINGKV_TOKEN" not in names)
    if exp["tls"]:
        check("SSL_CERT_FILE = /etc/ringkv/ca/ca.crt (the nodes' CA, which k6 trusts)",
              env.get("SSL_CERT_FILE") == "/etc/ringkv/ca/ca.crt", env.get("SSL_CERT_FILE"))
    others = [e for e in env_list if e["name"] != "RINGKV_TOKEN"]
    check("every other env value is a string", all(isinstance(e.get("value"), str) for e in others),
          [e for e in others if not isinstance(e.get("value"), str)])


def check_fill_and_job(c, spec, exp):
    pod = g(spec, "template", "spec") or {}
    inits = pod.get("initContainers") or []
    if exp["fill"] == "init":
        f = inits[0] if len(inits) == 1 else {}
        check("fill=init: one init container 'fill' running /scripts/fill.js",
              f.get("name") == "fill" and (f.get("args") or [])[-1:] == ["/scripts/fill.js"], inits)
        check("fill init container: same image, env, mounts and security context as k6",
              all(f.get(k) == c.get(k) for k in ("image", "env", "volumeMounts", "securityContext", "resources")))
    else:
        check("fill=%s: no init container" % exp["fill"], not inits, inits)

    check("restartPolicy Never, backoffLimit 0", pod.get("restartPolicy") == "Never" and spec.get("backoffLimit") == 0,
          (pod.get("restartPolicy"), spec.get("backoffLimit")))
    check("activeDeadlineSeconds = %d" % exp["activeDeadlineSeconds"],
          spec.get("activeDeadlineSeconds") == exp["activeDeadlineSeconds"], spec.get("activeDeadlineSeconds"))
    check("ttlSecondsAfterFinished = %s" % json.dumps(exp.get("ttl")), spec.get("ttlSecondsAfterFinished") == exp.get("ttl"),
          spec.get("ttlSecondsAfterFinished"))
    check("memory limit set", g(c, "resources", "limits", "memory"), c.get("resources"))


def check_isolation(c, spec, docs, exp):
    """The k6 pod is locked down, is never a backend of the Services, the PDB or the StatefulSet, and
    the NetworkPolicy lets it reach the http port."""
    pod = g(spec, "template", "spec") or {}
    pod_labels = g(spec, "template", "metadata", "labels") or {}
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
    check("pod labelled component=loadtest, not selected by the Services / PDB / StatefulSet",
          pod_labels.get("app.kubernetes.io/component") == "loadtest"
          and not any(subset(s, pod_labels) for s in release_selectors(docs)), pod_labels)
    nps = of_kind(docs, "NetworkPolicy")
    if exp.get("networkPolicy"):
        rules = [r for np_ in nps for r in g(np_, "spec", "ingress", default=[])
                 if any(p.get("port") == "http" for p in r.get("ports", []))]
        check("NetworkPolicy lets the k6 pod reach the http port",
              any(subset(g(peer, "podSelector", "matchLabels"), pod_labels) for r in rules for peer in r.get("from", [])),
              rules)


def job_name(path):
    """Prints the loadtest Job's name, or nothing when the render has not exactly one Job."""
    names = [d["metadata"]["name"] for d in of_kind(load(path), "Job")]
    print(names[0] if len(names) == 1 else "")
