"""The k6 load test (loadtest.*): one Job, not a hook, named after its pod template and scripts; a
ConfigMap holding loadtest/'s scripts byte for byte; the values in the env; the HTML report, written
by k6 and printed by a native sidecar; a locked-down pod that no Service, PodDisruptionBudget or
StatefulSet selects, and that the NetworkPolicy lets in."""
import base64
import gzip
import json
import os
import re

from .manifests import DNS1123_LABEL, g, load, of_kind, release_selectors, subset
from .report import check

CHART_FILES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "ringkv", "files")

SCRIPTS = ("fill.js", "kv.js", "lib.js")
# The web dashboard's settings, which only the k6 container of the run gets (a fill would write its
# own report over the run's).
REPORT_ENV = ("K6_WEB_DASHBOARD", "K6_WEB_DASHBOARD_PORT", "K6_WEB_DASHBOARD_PERIOD", "K6_WEB_DASHBOARD_EXPORT")


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
    check_report(ctrs[0], spec, exp)
    check_wait(spec, docs, exp)
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
        want_ref = {"name": "%s-tokens" % exp["fullname"], "key": "write-token"}
        check("RINGKV_TOKEN from %s/write-token (lib.js sends it as a Bearer token; k6 writes, no more)" % want_ref["name"],
              token == want_ref, token)
    else:
        check("security off: no RINGKV_TOKEN", "RINGKV_TOKEN" not in names)
    if exp["tls"]:
        check("SSL_CERT_FILE = /etc/ringkv/ca/ca.crt (the nodes' CA, which k6 trusts)",
              env.get("SSL_CERT_FILE") == "/etc/ringkv/ca/ca.crt", env.get("SSL_CERT_FILE"))
    others = [e for e in env_list if e["name"] != "RINGKV_TOKEN"]
    check("every other env value is a string", all(isinstance(e.get("value"), str) for e in others),
          [e for e in others if not isinstance(e.get("value"), str)])


def report_containers(pod):
    return [i for i in pod.get("initContainers") or [] if i.get("name") == "report"]


def without_report(c):
    """The container c as it would be without the report: no web dashboard settings, no /report mount."""
    return {**c, "env": [e for e in c.get("env") or [] if e["name"] not in REPORT_ENV],
            "volumeMounts": [m for m in c.get("volumeMounts") or [] if m["name"] != "report"]}


def check_fill_and_job(c, spec, exp):
    pod = g(spec, "template", "spec") or {}
    inits = [i for i in pod.get("initContainers") or [] if i.get("name") not in ("report", WAIT)]
    if exp["fill"] == "init":
        f = inits[0] if len(inits) == 1 else {}
        check("fill=init: one init container 'fill' running /scripts/fill.js",
              f.get("name") == "fill" and (f.get("args") or [])[-1:] == ["/scripts/fill.js"], inits)
        check("fill init container: same image, env, mounts and security context as k6, without the report's",
              all(f.get(k) == without_report(c).get(k)
                  for k in ("image", "env", "volumeMounts", "securityContext", "resources")))
    else:
        check("fill=%s: no init container but the wait and the report's" % exp["fill"], not inits, inits)

    check("restartPolicy Never, backoffLimit 0", pod.get("restartPolicy") == "Never" and spec.get("backoffLimit") == 0,
          (pod.get("restartPolicy"), spec.get("backoffLimit")))
    check("activeDeadlineSeconds = %d" % exp["activeDeadlineSeconds"],
          spec.get("activeDeadlineSeconds") == exp["activeDeadlineSeconds"], spec.get("activeDeadlineSeconds"))
    check("ttlSecondsAfterFinished = %s" % json.dumps(exp.get("ttl")), spec.get("ttlSecondsAfterFinished") == exp.get("ttl"),
          spec.get("ttlSecondsAfterFinished"))
    check("memory limit set", g(c, "resources", "limits", "memory"), c.get("resources"))


def check_report(c, spec, exp):
    """report.enabled: k6 exports its web dashboard, gzipped, into an emptyDir that a native sidecar
    (started before the fill, stopped after k6) mounts read-only and prints from; the fetch command
    of NOTES.txt (base64 -d | gunzip) reads that log."""
    pod = g(spec, "template", "spec") or {}
    reports = report_containers(pod)
    env = {e["name"]: e.get("value") for e in c.get("env") or []}
    vols = {v["name"]: v for v in pod.get("volumes") or []}
    if not exp["report"]:
        check("report disabled: no report container, no report volume, no web dashboard settings",
              not reports and "report" not in vols and not set(REPORT_ENV) & set(env), (reports, list(vols), env))
        return
    inits = pod.get("initContainers") or []
    check("one report container, the first init container after the wait, restartPolicy Always (a native sidecar)",
          len(reports) == 1 and len(inits) > 1 and inits[1] is reports[0]
          and reports[0].get("restartPolicy") == "Always",
          [(i.get("name"), i.get("restartPolicy")) for i in inits])
    if len(reports) != 1:
        return
    report = reports[0]
    check("report image = %s" % exp["reportImage"], report.get("image") == exp["reportImage"], report.get("image"))
    export = env.get("K6_WEB_DASHBOARD_EXPORT") or ""
    check("k6: web dashboard on, no server (port -1), period %s, exported gzipped (.gz)" % exp["reportPeriod"],
          env.get("K6_WEB_DASHBOARD") == "true" and env.get("K6_WEB_DASHBOARD_PORT") == "-1"
          and env.get("K6_WEB_DASHBOARD_PERIOD") == exp["reportPeriod"] and export.endswith(".gz"),
          {k: env.get(k) for k in REPORT_ENV})
    k6_mount = next((m for m in c.get("volumeMounts") or [] if export.startswith(m["mountPath"] + "/")), {})
    report_mount = next((m for m in report.get("volumeMounts") or [] if m["name"] == k6_mount.get("name")), {})
    check("the export is on an emptyDir that k6 writes and the report container mounts read-only at the same path",
          "emptyDir" in (vols.get(k6_mount.get("name")) or {}) and not k6_mount.get("readOnly")
          and report_mount.get("readOnly") is True and report_mount.get("mountPath") == k6_mount.get("mountPath"),
          (k6_mount, report.get("volumeMounts")))
    script = (report.get("command") or [])[-1:]
    check("the report container prints the export base64-encoded when stopped (trap on TERM)",
          (report.get("command") or [])[:2] == ["/bin/sh", "-c"] and script
          and "base64 %s" % export in script[0] and "trap" in script[0] and "TERM" in script[0], report.get("command"))
    annotations = g(spec, "template", "metadata", "annotations") or {}
    check("the pod's default container is k6 (kubectl logs job/<name> without -c)",
          annotations.get("kubectl.kubernetes.io/default-container") == "k6", annotations)


WAIT = "wait-for-release"


def check_wait(spec, docs, exp):
    """Before anything else, the pod waits until the client Service answers GET /v0/status 200
    (files/wait-for-release.js from the ConfigMap <fullname>-wait), with k6's image and the nodes' CA."""
    pod = g(spec, "template", "spec") or {}
    inits = pod.get("initContainers") or []
    w = inits[0] if inits and inits[0].get("name") == WAIT else {}
    check("the first init container is %s (nothing starts before the release answers)" % WAIT, w,
          [i.get("name") for i in inits])
    if not w:
        return
    env = {e["name"]: e.get("value") for e in w.get("env") or []}
    url = "%s://%s:%d" % ("https" if exp["tls"] else "http", exp["fullname"], exp["servicePort"])
    check("%s: k6 image %s, /wait/wait-for-release.js on BASE_URL %s, bounded by WAIT_TIMEOUT_SECONDS"
          % (WAIT, exp["image"], url),
          w.get("image") == exp["image"] and (w.get("args") or [])[-1:] == ["/wait/wait-for-release.js"]
          and env.get("BASE_URL") == url and (env.get("WAIT_TIMEOUT_SECONDS") or "").isdigit(), (w.get("image"), env))
    check("%s: trusts the nodes' CA only with TLS (SSL_CERT_FILE), and has no token" % WAIT,
          (env.get("SSL_CERT_FILE") == "/etc/ringkv/ca/ca.crt") == exp["tls"] and "RINGKV_TOKEN" not in env, env)
    vols = {v["name"]: v for v in pod.get("volumes") or []}
    mounts = {m["mountPath"]: m["name"] for m in w.get("volumeMounts") or []}
    name = g(vols.get(mounts.get("/wait")) or {}, "configMap", "name")
    cm = next((d for d in of_kind(docs, "ConfigMap") if d["metadata"]["name"] == name), None)
    with open(os.path.join(CHART_FILES, "wait-for-release.js")) as f:
        script = f.read()
    check("/wait is the ConfigMap %s, holding files/wait-for-release.js byte for byte" % name,
          cm is not None and g(cm, "data", "wait-for-release.js") == script, (mounts, name))


def check_isolation(c, spec, docs, exp):
    """The k6 pod and each of its containers (k6, the fill, the report) are locked down, the pod is
    never a backend of the Services, the PDB or the StatefulSet, and the NetworkPolicy lets it reach
    the http port."""
    pod = g(spec, "template", "spec") or {}
    pod_labels = g(spec, "template", "metadata", "labels") or {}
    psc = pod.get("securityContext") or {}
    check("k6 pod: no service account token", pod.get("automountServiceAccountToken") is False,
          pod.get("automountServiceAccountToken"))
    for ctr in (pod.get("initContainers") or []) + [c]:
        csc = ctr.get("securityContext") or {}
        check("%s container: runAsNonRoot, non-root uid, read-only root fs, no privilege escalation, "
              "capabilities drop ALL, seccomp RuntimeDefault" % ctr.get("name"),
              csc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True
              and (csc.get("runAsUser", psc.get("runAsUser")) or 0) > 0
              and csc.get("readOnlyRootFilesystem") is True and csc.get("allowPrivilegeEscalation") is False
              and "ALL" in (g(csc, "capabilities", "drop") or [])
              and g(csc, "seccompProfile", "type", default=g(psc, "seccompProfile", "type")) == "RuntimeDefault",
              (psc, csc))
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


def report_part(path, part, scratch):
    """Prints a part of the render's report, its directory moved to scratch (helm/verify.sh runs it
    outside Kubernetes): "env", the k6 container's web dashboard settings as NAME=VALUE lines;
    "script", the report container's shell script."""
    [job] = of_kind(load(path), "Job")
    pod = job["spec"]["template"]["spec"]
    [report] = report_containers(pod)
    [directory] = [m["mountPath"] for m in report["volumeMounts"] if m["name"] == "report"]

    def moved(text):
        return text.replace(directory + "/", scratch + "/")

    if part == "env":
        for e in pod["containers"][0]["env"]:
            if e["name"] in REPORT_ENV:
                print("%s=%s" % (e["name"], moved(e["value"])))
    else:
        print(moved(report["command"][-1]))


def report_html(path):
    """The file the fetch command wrote is k6's HTML report: its page, the dashboard's layout with
    charts, and the run's data to draw them from (the snapshots of at least two periods)."""
    with open(path, encoding="utf-8") as f:
        html = f.read()
    check("report: an HTML page", html.lstrip().lower().startswith("<!doctype html>"), html[:200])
    data = re.search(r'<script id="data"[^>]*>(.*?)</script>', html, re.S)
    check("report: holds the run's data (gzipped, base64)", data is not None)
    if data is None:
        return
    events = [json.loads(line) for line in gzip.decompress(base64.b64decode(data.group(1).strip())).decode().splitlines()
              if line.strip()]
    config = next((e["data"] for e in events if e.get("event") == "config"), {})
    charts = [p.get("title") for tab in config.get("tabs", []) for section in tab.get("sections", [])
              for p in section.get("panels", []) if p.get("kind") == "chart"]
    check("report: charts, among them the request duration", "HTTP Request Duration" in charts, charts)
    snapshots = [e for e in events if e.get("event") == "snapshot"]
    check("report: data of at least two periods to draw", len(snapshots) >= 2, len(snapshots))
    metrics = {name for e in events if e.get("event") == "metric" for name in e["data"]}
    check("report: the HTTP metrics of the run", {"http_reqs", "http_req_duration"} <= metrics, sorted(metrics))
