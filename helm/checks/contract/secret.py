"""The Secrets of a render: the cluster secret (from cluster.existingSecret, or the chart's Secret with
cluster.secret or a random value), the tokens file and the TLS files; and never a secret in k8s/."""
import base64
import datetime
import os
import re
import subprocess

from .manifests import g, load
from .report import check


def _data(secret, key):
    """The decoded value of key in the Secret's data, or None."""
    try:
        return base64.b64decode(g(secret, "data", key)).decode()
    except Exception:
        return None


def _ref(env, name):
    return g(env, name, "valueFrom", "secretKeyRef") or {}


def _mounted(r, path):
    """The Secret mounted at path in the ringkv container, or None."""
    mounts = {m["mountPath"]: m["name"] for m in r.container.get("volumeMounts", [])}
    vols = {v["name"]: v for v in r.pod.get("volumes", [])}
    return g(vols.get(mounts.get(path)) or {}, "secret", "secretName")


CLUSTER_SECRET_DIR = "/etc/ringkv/cluster"


def cluster_secret_sources(r, path):
    """The Secret sources of the projected volume mounted at path in the ringkv container ([] if none)."""
    mounts = {m["mountPath"]: m["name"] for m in r.container.get("volumeMounts", [])}
    vols = {v["name"]: v for v in r.pod.get("volumes", [])}
    sources = g(vols.get(mounts.get(path)) or {}, "projected", "sources") or []
    return [src.get("secret") for src in sources]


def _validity_days(pem):
    """Days from notBefore to notAfter of a PEM certificate (openssl x509), or None."""
    try:
        out = subprocess.run(["openssl", "x509", "-noout", "-startdate", "-enddate"], input=pem.encode(),
                             capture_output=True, check=True).stdout.decode()
    except (OSError, subprocess.CalledProcessError):
        return None
    dates = dict(line.split("=", 1) for line in out.splitlines())
    parse = lambda d: datetime.datetime.strptime(d, "%b %d %H:%M:%S %Y %Z")
    return (parse(dates["notAfter"]) - parse(dates["notBefore"])).days


def check_cluster_secret(r):
    """The cluster secret (two keys for a rotation), from the chart's Secret <fullname> or existingSecret;
    no hash of any secret in the pod template."""
    exp, env = r.exp, r.env
    secrets = {d["metadata"]["name"]: d for d in r.kinds("Secret")}
    check("no checksum/* annotation on the pod template (no hash of a secret; rotation is two-key)",
          not any(k.startswith("checksum/") for k in r.pod_annotations), r.pod_annotations)
    check("no RINGKV_CLUSTER_KUBERNETES_SECRET (the nodes never fetch the secret themselves)",
          "RINGKV_CLUSTER_KUBERNETES_SECRET" not in env, env.get("RINGKV_CLUSTER_KUBERNETES_SECRET"))
    name = exp.get("existingSecret") or exp["fullname"]
    check("no environment variable holds the cluster secret (RINGKV_CLUSTER_SECRET, _PREVIOUS_SECRET)",
          not {"RINGKV_CLUSTER_SECRET", "RINGKV_CLUSTER_PREVIOUS_SECRET"} & set(env), sorted(env))
    check("SPRING_CONFIG_IMPORT = optional:configtree:%s/ (the files as properties)" % CLUSTER_SECRET_DIR,
          g(env, "SPRING_CONFIG_IMPORT", "value") == "optional:configtree:%s/" % CLUSTER_SECRET_DIR,
          g(env, "SPRING_CONFIG_IMPORT"))
    check("the cluster secret as files at %s from Secret %s: ringkv.cluster.secret (key cluster-secret, required), "
          "ringkv.cluster.previous-secret (key previous-cluster-secret, optional)" % (CLUSTER_SECRET_DIR, name),
          cluster_secret_sources(r, CLUSTER_SECRET_DIR) == [
              {"name": name, "items": [{"key": "cluster-secret", "path": "ringkv.cluster.secret"}]},
              {"name": name, "optional": True,
               "items": [{"key": "previous-cluster-secret", "path": "ringkv.cluster.previous-secret"}]}],
          cluster_secret_sources(r, CLUSTER_SECRET_DIR))
    if exp.get("existingSecret"):
        check("existingSecret %s: no cluster Secret rendered" % name,
              name not in secrets and exp["fullname"] not in secrets, list(secrets))
        return
    sec = secrets.get(name)
    check("the chart renders the cluster Secret %s, kept on uninstall (helm.sh/resource-policy: keep)" % name,
          sec is not None and g(sec, "metadata", "annotations", "helm.sh/resource-policy") == "keep", list(secrets))
    value = _data(sec, "cluster-secret") if sec else None
    if exp.get("secretValue"):
        check("cluster secret = the value given in cluster.secret", value == exp["secretValue"])
    else:
        check("cluster secret: 32 random alphanumerics (nothing given, nothing in the cluster)",
              value is not None and re.fullmatch(r"[A-Za-z0-9]{32}", value), value and len(value))
    previous = _data(sec, "previous-cluster-secret") if sec else None
    check("previous-cluster-secret = cluster.previousSecret (%s)" % ("set" if exp.get("previousSecret") else "absent"),
          previous == exp.get("previousSecret"), previous)


def check_tokens_and_tls(r):
    """security.enabled: the tokens file from the chart's Secret (an admin token) or existingSecret;
    tls.enabled: the certificate, key and CA from a kubernetes.io/tls Secret; each at a fixed path."""
    exp, val = r.exp, r.val
    secrets = {d["metadata"]["name"]: d for d in r.kinds("Secret")}
    check("RINGKV_SECURITY_ENABLED = %s" % str(exp["security"]).lower(),
          val("RINGKV_SECURITY_ENABLED") == str(exp["security"]).lower(), val("RINGKV_SECURITY_ENABLED"))
    check("RINGKV_TLS_ENABLED = %s" % str(exp["tls"]).lower(),
          val("RINGKV_TLS_ENABLED") == str(exp["tls"]).lower(), val("RINGKV_TLS_ENABLED"))
    tokens_name = exp.get("tokensSecret") or "%s-tokens" % exp["fullname"]
    if exp["security"]:
        check("RINGKV_SECURITY_TOKENS_FILE = /etc/ringkv/security/tokens, mounted from Secret %s" % tokens_name,
              val("RINGKV_SECURITY_TOKENS_FILE") == "/etc/ringkv/security/tokens"
              and _mounted(r, "/etc/ringkv/security") == tokens_name, val("RINGKV_SECURITY_TOKENS_FILE"))
        if not exp.get("tokensSecret"):
            sec = secrets.get(tokens_name)
            lines = (_data(sec, "tokens") or "").splitlines() if sec else []
            for role in ("admin", "write", "read"):
                token = _data(sec, role + "-token") if sec else None
                check("Secret %s: a random %s token (key %s-token), and the tokens file gives it role %s"
                      % (tokens_name, role, role, role),
                      token and len(token) >= 32 and ("%s %s %s" % (token, role, role)) in lines,
                      sec and list(sec.get("data", {})))
    else:
        check("security off: no tokens file, no tokens Secret",
              "RINGKV_SECURITY_TOKENS_FILE" not in r.env and tokens_name not in secrets, list(secrets))
    tls_name = exp.get("tlsSecret") or "%s-tls" % exp["fullname"]
    files = {"RINGKV_TLS_CERTIFICATE": "tls.crt", "RINGKV_TLS_PRIVATE_KEY": "tls.key", "RINGKV_TLS_CA": "ca.crt"}
    if exp["tls"]:
        check("RINGKV_TLS_CERTIFICATE/PRIVATE_KEY/CA = /etc/ringkv/tls/{tls.crt,tls.key,ca.crt}, mounted from %s" % tls_name,
              all(val(k) == "/etc/ringkv/tls/" + f for k, f in files.items())
              and _mounted(r, "/etc/ringkv/tls") == tls_name, {k: val(k) for k in files})
        if not exp.get("tlsSecret"):
            sec = secrets.get(tls_name) or {}
            check("Secret %s: kubernetes.io/tls with tls.crt, tls.key and ca.crt (generated by the chart)" % tls_name,
                  sec.get("type") == "kubernetes.io/tls"
                  and all((_data(sec, k) or "").startswith("-----BEGIN") for k in ("tls.crt", "tls.key", "ca.crt")),
                  sec and list(sec.get("data", {})))
            # Nothing renews them (cert-manager does its own): a stolen CA key or certificate is
            # good for this long. docs/security.md says how to renew.
            for key in ("ca.crt", "tls.crt"):
                days = _validity_days(_data(sec, key) or "")
                check("Secret %s: %s valid for tls.validityDays (%s days)" % (tls_name, key, exp["tlsValidityDays"]),
                      days == exp["tlsValidityDays"], days)
    else:
        check("TLS off: no TLS files, no TLS Secret",
              not any(k in r.env for k in files) and tls_name not in secrets, list(secrets))


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


# What the no-secret check must find, or it would prove nothing.
PLANTED_SECRETS = {
    "a secretGenerator with a literal": {"kustomization.yaml": [
        {"kind": "Kustomization", "secretGenerator": [{"name": "ringkv", "literals": ["cluster-secret=CHANGE-ME"]}]}]},
    "a Secret": {"secret.yaml": [
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "ringkv"}, "data": {"cluster-secret": "eA=="}}]},
    "RINGKV_CLUSTER_SECRET with a literal value": {"statefulset.yaml": [
        {"kind": "StatefulSet", "spec": {"template": {"spec": {"containers": [
            {"name": "ringkv", "env": [{"name": "RINGKV_CLUSTER_SECRET", "value": "0123456789abcdef"}]}]}}}}]},
}


def k8s_no_secret(k8s_dir):
    """The base holds no secret (comments may show an overlay that adds them): it names Secrets an overlay makes."""
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
    for what, planted in PLANTED_SECRETS.items():
        check("the no-secret check catches %s" % what, secret_findings(planted), "not caught")
