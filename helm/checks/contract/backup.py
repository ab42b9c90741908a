"""Backups and restores (backup.*, restore.*): the nodes' backup settings and the store's credentials,
only with a target; the backup CronJob, only with a schedule, and the restore Job, only with
restore.from, each a locked-down k6 pod running its script of files/ (byte for byte, beside the helpers
it imports, files/actuator-client.js) against the nodes' management port by the headless Service's pod
names, with the admin token and the nodes' CA; and a NetworkPolicy that lets those pods in.
helm/verify.sh also runs the scripts (scripts) with k6 against a mock of the nodes
(helm/checks/mock_actuator.py)."""
import copy
import os
import re

from .manifests import DNS1123_LABEL, g, load, of_kind, release_selectors, subset
from .netpol import covers
from .report import check, collect, failed_names

CHART = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "ringkv")
# The helpers backup.js and restore.js import (`./actuator-client.js`): in each ConfigMap beside the script.
SHARED = "actuator-client.js"
# A script's imports of a file beside it: import ... from './NAME'.
LOCAL_IMPORT = re.compile(r"""^import\s[^;]*?\sfrom\s+['"]\./([^'"]+)['"]""", re.M)
BACKUP_ENV = ("RINGKV_BACKUP_TARGET", "RINGKV_BACKUP_ENDPOINT", "RINGKV_BACKUP_REGION", "RINGKV_BACKUP_RATE",
              "RINGKV_BACKUP_KEEP", "RINGKV_BACKUP_STAGING_DIR", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
# What the default render (release ringkv, namespace default) is expected to hold; verify.sh names what
# differs. backup: a CronJob is expected (backup.schedule); restore: a restore Job (restore.from).
DEFAULT = {
    "namespace": "default", "fullname": "ringkv", "replicas": 3, "clusterDomain": "cluster.local",
    "httpPort": 8080, "managementPort": 9090, "security": True, "tls": True, "testImage": "grafana/k6:1.8.1",
    "networkPolicy": True, "target": "", "endpoint": "", "region": "us-east-1", "rate": "32MB", "keep": "7",
    "existingSecret": "", "backup": False, "schedule": "", "timeoutSeconds": 900, "restore": False, "from": "",
    "asOf": "", "attempts": 3, "activeDeadlineSeconds": 7200,
}


def component(d):
    return g(d, "metadata", "labels", "app.kubernetes.io/component")


def script_text(name):
    with open(os.path.join(CHART, "files", name)) as f:
        return f.read()


def backup_checks(docs, exp):
    sts = (of_kind(docs, "StatefulSet") or [{}])[0]
    check_node_env(sts, exp)
    cronjobs = of_kind(docs, "CronJob")
    jobs = [d for d in of_kind(docs, "Job") if component(d) == "restore"]
    maps = {component(d): d for d in of_kind(docs, "ConfigMap") if component(d) in ("backup", "restore")}
    if exp["backup"]:
        check("one CronJob, labelled component=backup, with its script's ConfigMap",
              len(cronjobs) == 1 and component(cronjobs[0]) == "backup" and "backup" in maps,
              [(d["metadata"]["name"], component(d)) for d in cronjobs] + list(maps))
        if len(cronjobs) == 1 and "backup" in maps:
            check_cronjob(cronjobs[0], maps["backup"], sts, docs, exp)
    else:
        check("no backup.schedule: no CronJob and no backup ConfigMap", not cronjobs and "backup" not in maps,
              [d["metadata"]["name"] for d in cronjobs] + list(maps))
    if exp["restore"]:
        check("one restore Job, labelled component=restore, with its script's ConfigMap",
              len(jobs) == 1 and "restore" in maps, [d["metadata"]["name"] for d in jobs] + list(maps))
        if len(jobs) == 1 and "restore" in maps:
            check_restore_job(jobs[0], maps["restore"], sts, docs, exp)
    else:
        check("no restore.from: no restore Job and no restore ConfigMap", not jobs and "restore" not in maps,
              [d["metadata"]["name"] for d in jobs] + list(maps))


def check_node_env(sts, exp):
    containers = g(sts, "spec", "template", "spec", "containers", default=[])
    env = {e["name"]: e for e in (containers[0].get("env") or [])} if containers else {}
    present = [n for n in BACKUP_ENV if n in env]
    if not exp["target"]:
        check("no backup.target: no RINGKV_BACKUP_* or AWS_* in the nodes' env", not present, present)
        return
    want = {"RINGKV_BACKUP_TARGET": exp["target"], "RINGKV_BACKUP_REGION": exp["region"],
            "RINGKV_BACKUP_RATE": exp["rate"], "RINGKV_BACKUP_KEEP": exp["keep"]}
    if exp["endpoint"]:
        want["RINGKV_BACKUP_ENDPOINT"] = exp["endpoint"]
    got = {n: g(env, n, "value") for n in want}
    check("nodes' env carries the backup settings: %s" % " ".join("%s=%s" % kv for kv in sorted(want.items())),
          got == want and (exp["endpoint"] or "RINGKV_BACKUP_ENDPOINT" not in env)
          and "RINGKV_BACKUP_STAGING_DIR" not in env, got)
    if exp["existingSecret"]:
        refs = {n: g(env, n, "valueFrom", "secretKeyRef") for n in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
        check("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY from Secret %s, keys of the same names, required"
              % exp["existingSecret"],
              all(ref == {"name": exp["existingSecret"], "key": n} for n, ref in refs.items()), refs)
    else:
        check("no backup.existingSecret: no AWS_* in the nodes' env",
              "AWS_ACCESS_KEY_ID" not in env and "AWS_SECRET_ACCESS_KEY" not in env)


def node_urls(sts, exp, port):
    """The nodes' URLs on port, pods 0..replicas-1 by the StatefulSet's headless Service, as pods of the
    namespace resolve them."""
    scheme = "https" if exp["tls"] else "http"
    return ["%s://%s-%d.%s.%s.svc.%s:%d" % (scheme, sts["metadata"]["name"], i, g(sts, "spec", "serviceName"),
                                           exp["namespace"], exp["clusterDomain"], port)
            for i in range(g(sts, "spec", "replicas", default=0))]


def container_ports(sts):
    containers = g(sts, "spec", "template", "spec", "containers", default=[])
    return {p.get("name"): p.get("containerPort") for p in (containers[0].get("ports") or [])} if containers else {}


def check_pod(what, pod_template, cm, script, docs, exp):
    """The k6 pod: its image and script, the admin token and the CA, locked down, selected by nobody, and
    let in by the NetworkPolicy. Returns its container's env (name -> value)."""
    pod = pod_template.get("spec") or {}
    labels = g(pod_template, "metadata", "labels") or {}
    ctrs = pod.get("containers") or [{}]
    c = ctrs[0]
    env_list = c.get("env") or []
    env = {e["name"]: e.get("value") for e in env_list}
    names = [e["name"] for e in env_list]
    check("%s: one container, image %s (tests.image), k6 running /scripts/%s" % (what, exp["testImage"], script),
          len(ctrs) == 1 and c.get("image") == exp["testImage"] and not c.get("command")
          and (c.get("args") or [])[:1] == ["run"] and (c.get("args") or [])[-1:] == ["/scripts/%s" % script],
          (c.get("image"), c.get("command"), c.get("args")))
    data = cm.get("data") or {}
    check("%s: the ConfigMap %s holds files/%s byte for byte" % (what, cm["metadata"]["name"], script),
          data.get(script) == script_text(script))
    imports = LOCAL_IMPORT.findall(data.get(script) or "")
    check("%s: the ConfigMap %s holds files/%s byte for byte beside %s, which imports it, and nothing else"
          % (what, cm["metadata"]["name"], SHARED, script),
          imports == [SHARED] and data.get(SHARED) == script_text(SHARED) and sorted(data) == sorted([script, SHARED]),
          (imports, sorted(data)))
    vols = {v["name"]: v for v in pod.get("volumes") or []}
    mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts") or []}
    check("%s: /scripts is that ConfigMap" % what,
          g(vols.get(mounts.get("/scripts")) or {}, "configMap", "name") == cm["metadata"]["name"], (mounts, vols))
    check("%s: env names are unique" % what, len(names) == len(set(names)), names)
    token = g(next((e for e in env_list if e["name"] == "RINGKV_TOKEN"), {}), "valueFrom", "secretKeyRef")
    if exp["security"]:
        want = {"name": exp.get("tokensSecret") or "%s-tokens" % exp["fullname"], "key": "admin-token"}
        check("%s: RINGKV_TOKEN from %s/admin-token" % (what, want["name"]), token == want, token)
    else:
        check("%s: security off, no RINGKV_TOKEN" % what, "RINGKV_TOKEN" not in names)
    if exp["tls"]:
        ca = env.get("SSL_CERT_FILE") or ""
        tls_name = exp.get("tlsSecret") or "%s-tls" % exp["fullname"]
        check("%s: SSL_CERT_FILE is the ca.crt of %s, mounted" % (what, tls_name),
              ca.endswith("/ca.crt") and g(vols.get(mounts.get(os.path.dirname(ca))) or {}, "secret", "secretName") == tls_name,
              (ca, mounts))
    else:
        check("%s: TLS off, no SSL_CERT_FILE" % what, "SSL_CERT_FILE" not in names)
    psc, csc = pod.get("securityContext") or {}, c.get("securityContext") or {}
    check("%s: restartPolicy Never, no ServiceAccount token, non-root, read-only root fs, no privilege "
          "escalation, capabilities drop ALL, seccomp RuntimeDefault" % what,
          pod.get("restartPolicy") == "Never" and pod.get("automountServiceAccountToken") is False
          and psc.get("runAsNonRoot") is True and (psc.get("runAsUser") or 0) > 0
          and csc.get("readOnlyRootFilesystem") is True and csc.get("allowPrivilegeEscalation") is False
          and "ALL" in (g(csc, "capabilities", "drop") or []) and g(psc, "seccompProfile", "type") == "RuntimeDefault",
          (pod.get("restartPolicy"), pod.get("automountServiceAccountToken"), psc, csc))
    check("%s: memory limit set" % what, g(c, "resources", "limits", "memory"), c.get("resources"))
    check("%s: pod not selected by the Services / PDB / StatefulSet" % what,
          labels and not any(subset(s, labels) for s in release_selectors(docs)), labels)
    return env, labels


def admitted(docs, labels, port_name, port_num):
    """Whether the NetworkPolicy lets a pod with these labels (same namespace) reach the port."""
    for np_ in of_kind(docs, "NetworkPolicy"):
        for rule in g(np_, "spec", "ingress", default=[]):
            if not covers(rule, port_name, port_num):
                continue
            if not rule.get("from"):
                return True
            for peer in rule["from"]:
                if "namespaceSelector" in peer or "ipBlock" in peer:
                    continue
                sel = g(peer, "podSelector", "matchLabels")
                if "podSelector" in peer and (peer["podSelector"] == {} or subset(sel, labels)):
                    return True
    return False


def check_cronjob(cj, cm, sts, docs, exp):
    spec = cj.get("spec") or {}
    name = cj["metadata"]["name"]
    check("CronJob name %s: a DNS label of at most 52 characters (its Jobs add 11)" % name,
          len(name) <= 52 and DNS1123_LABEL.match(name), name)
    check("CronJob schedule %s, concurrencyPolicy Forbid" % exp["schedule"],
          spec.get("schedule") == exp["schedule"] and spec.get("concurrencyPolicy") == exp.get("concurrencyPolicy", "Forbid"),
          (spec.get("schedule"), spec.get("concurrencyPolicy")))
    job = g(spec, "jobTemplate", "spec") or {}
    env, labels = check_pod("backup pod", job.get("template") or {}, cm, "backup.js", docs, exp)
    mgmt = container_ports(sts).get("management")
    want = ",".join(node_urls(sts, exp, mgmt or 0))
    check("backup pod: NODES = every pod's management port (%s), pod 0 first, by the headless Service" % mgmt,
          mgmt == exp["managementPort"] and env.get("NODES") == want, "%s != %s" % (env.get("NODES"), want))
    timeout = str(exp["timeoutSeconds"])
    check("backup pod: TIMEOUT_SECONDS = %s, under the Job's activeDeadlineSeconds (the script says why it "
          "gave up before the Job is killed)" % timeout,
          env.get("TIMEOUT_SECONDS") == timeout and (job.get("activeDeadlineSeconds") or 0) > int(timeout),
          (env.get("TIMEOUT_SECONDS"), job.get("activeDeadlineSeconds")))
    if exp["networkPolicy"]:
        check("NetworkPolicy lets the backup pod reach the management port",
              admitted(docs, labels, "management", exp["managementPort"]))


def check_restore_job(job, cm, sts, docs, exp):
    name = job["metadata"]["name"]
    prefix = exp["fullname"][:45].rstrip("-") + "-restore-"
    check("restore Job name %s<8 hex>, a DNS label of at most 63 characters" % prefix,
          name.startswith(prefix) and re.fullmatch(r"[0-9a-f]{8}", name[len(prefix):]) and len(name) <= 63
          and DNS1123_LABEL.match(name), name)
    check("restore Job is not a hook (helm install creates it and does not wait for it)",
          "helm.sh/hook" not in (g(job, "metadata", "annotations") or {}), g(job, "metadata", "annotations"))
    spec = job.get("spec") or {}
    env, labels = check_pod("restore pod", spec.get("template") or {}, cm, "restore.js", docs, exp)
    ports = container_ports(sts)
    status = ",".join(node_urls(sts, exp, ports.get("http") or 0))
    check("restore pod: STATUS_URLS = every pod's http port (%s), by the headless Service" % ports.get("http"),
          ports.get("http") == exp["httpPort"] and env.get("STATUS_URLS") == status,
          "%s != %s" % (env.get("STATUS_URLS"), status))
    mgmt = node_urls(sts, exp, ports.get("management") or 0)[:1]
    check("restore pod: MANAGEMENT_URL = pod 0's management port (the restore is asked of it and followed there)",
          [env.get("MANAGEMENT_URL")] == mgmt, (env.get("MANAGEMENT_URL"), mgmt))
    want = {"FROM": exp["from"], "AS_OF": exp["asOf"], "ATTEMPTS": str(exp["attempts"]),
            "DEADLINE_SECONDS": str(exp["activeDeadlineSeconds"])}
    got = {k: env.get(k) for k in want}
    check("restore pod: %s" % " ".join("%s=%s" % kv for kv in sorted(want.items())), got == want, got)
    check("restore Job: activeDeadlineSeconds %d, backoffLimit >= 1 (a restore resumes)" % exp["activeDeadlineSeconds"],
          spec.get("activeDeadlineSeconds") == exp["activeDeadlineSeconds"] and (spec.get("backoffLimit") or 0) >= 1,
          (spec.get("activeDeadlineSeconds"), spec.get("backoffLimit")))
    if exp["networkPolicy"]:
        check("NetworkPolicy lets the restore pod reach the management port and the http port (GET /v0/status)",
              admitted(docs, labels, "management", exp["managementPort"]) and admitted(docs, labels, "http", exp["httpPort"]))


def scripts(path, comp, directory):
    """Writes the files of the ConfigMap of COMP (backup, restore) into DIRECTORY, as its pod has them in
    /scripts (the script beside actuator-client.js), and prints their names."""
    [cm] = [d for d in of_kind(load(path), "ConfigMap") if component(d) == comp]
    os.makedirs(directory, exist_ok=True)
    for name, text in sorted((cm.get("data") or {}).items()):
        with open(os.path.join(directory, name), "w") as f:
            f.write(text)
        print(name)


def job_name(path):
    """Prints the restore Job's name, or nothing."""
    names = [d["metadata"]["name"] for d in of_kind(load(path), "Job") if component(d) == "restore"]
    print(names[0] if len(names) == 1 else "")


def backup_teeth(docs, exp):
    """The backup checks must fail on copies of a good render (backup.schedule, restore.from, an s3 target
    with its Secret, behind a NetworkPolicy) broken in each way that matters, or they would prove nothing."""
    def cronjob_pod(ds):
        return of_kind(ds, "CronJob")[0]["spec"]["jobTemplate"]["spec"]["template"]["spec"]

    def restore_pod(ds):
        return [d for d in of_kind(ds, "Job") if component(d) == "restore"][0]["spec"]["template"]["spec"]

    def env_of(pod, name):
        return [e for e in pod["containers"][0]["env"] if e["name"] == name][0]

    def drop_env(pod, name):
        pod["containers"][0]["env"] = [e for e in pod["containers"][0]["env"] if e["name"] != name]

    def node_env(ds):
        return of_kind(ds, "StatefulSet")[0]["spec"]["template"]["spec"]["containers"][0]["env"]

    def rule(ds, port):
        return [r for r in of_kind(ds, "NetworkPolicy")[0]["spec"]["ingress"]
                if any(p.get("port") == port for p in r.get("ports", []))][0]

    def without_peer(ds, port, name):
        r = rule(ds, port)
        r["from"] = [p for p in r["from"] if g(p, "podSelector", "matchLabels", "app.kubernetes.io/name") != name]

    # The chart's name part of the labels (ringkv, or nameOverride).
    chart_name = g(of_kind(docs, "StatefulSet")[0], "metadata", "labels", "app.kubernetes.io/name")

    def one_node_less(ds):
        env = env_of(cronjob_pod(ds), "NODES")
        env["value"] = ",".join(env["value"].split(",")[:-1])

    def http_port(ds):
        env = env_of(cronjob_pod(ds), "NODES")
        env["value"] = env["value"].replace(":%d" % exp["managementPort"], ":%d" % exp["httpPort"])

    def drifted(ds):
        [cm] = [d for d in of_kind(ds, "ConfigMap") if component(d) == "backup"]
        cm["data"]["backup.js"] += "\n// drifted"

    def maps(ds):
        return {component(d): d for d in of_kind(ds, "ConfigMap") if component(d) in ("backup", "restore")}

    def shared_drifted(ds):
        maps(ds)["backup"]["data"][SHARED] += "\n// drifted"

    def writable(ds):
        cronjob_pod(ds)["containers"][0]["securityContext"]["readOnlyRootFilesystem"] = False

    def pod_one(ds):
        env = env_of(restore_pod(ds), "MANAGEMENT_URL")
        env["value"] = env["value"].replace("-0.", "-1.")

    def hook(ds):
        [job] = [d for d in of_kind(ds, "Job") if component(d) == "restore"]
        job["metadata"]["annotations"] = {"helm.sh/hook": "post-install"}

    def no_credentials(ds):
        of_kind(ds, "StatefulSet")[0]["spec"]["template"]["spec"]["containers"][0]["env"] = [
            e for e in node_env(ds) if not e["name"].startswith("AWS_")]

    broken = {
        "NODES without the last pod": (one_node_less, "NODES"),
        "NODES on the http port": (http_port, "NODES"),
        "a backup pod without the admin token": (lambda ds: drop_env(cronjob_pod(ds), "RINGKV_TOKEN"), "RINGKV_TOKEN"),
        "a backup pod without the nodes' CA": (lambda ds: drop_env(cronjob_pod(ds), "SSL_CERT_FILE"), "SSL_CERT_FILE"),
        "a backup script that differs from files/backup.js": (drifted, "byte for byte"),
        "a backup ConfigMap whose actuator-client.js differs from files/actuator-client.js": (shared_drifted, SHARED),
        "a restore ConfigMap without actuator-client.js": (lambda ds: maps(ds)["restore"]["data"].pop(SHARED), SHARED),
        "a backup pod with a writable root filesystem": (writable, "read-only root fs"),
        "a NetworkPolicy that keeps the backup pod off the management port":
            (lambda ds: without_peer(ds, "management", "%s-backup" % chart_name), "backup pod reach"),
        "a restore asked of pod 1": (pod_one, "MANAGEMENT_URL"),
        "a restore without AS_OF": (lambda ds: drop_env(restore_pod(ds), "AS_OF"), "AS_OF"),
        "a restore Job made a hook": (hook, "not a hook"),
        "a NetworkPolicy that keeps the restore pod off the http port":
            (lambda ds: without_peer(ds, "http", "%s-restore" % chart_name), "restore pod reach"),
        "nodes without the store's credentials": (no_credentials, "AWS_ACCESS_KEY_ID"),
        "nodes with another target": (lambda ds: [e.update(value="s3://other/x") for e in node_env(ds)
                                                  if e["name"] == "RINGKV_BACKUP_TARGET"], "backup settings"),
    }
    for what, (mutate, part) in broken.items():
        ds = copy.deepcopy(docs)
        mutate(ds)
        failed = failed_names(collect(backup_checks, ds, exp))
        check("the backup checks catch %s" % what, any(part in n for n in failed), failed)
