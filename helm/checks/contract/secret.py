"""The cluster secret: from cluster.existingSecret, from cluster.secret, or (neither) made by the first
node, and never a secret in k8s/."""
import base64
import hashlib
import os
import re

from .manifests import g, load
from .report import check


def _sha256(text):
    return hashlib.sha256(text.encode()).hexdigest()


def check_cluster_secret(r):
    exp, env, source = r.exp, r.env, r.secret_source
    secrets = {d["metadata"]["name"]: d for d in r.kinds("Secret")}
    checksum = r.pod_annotations.get("checksum/secret", "")
    check("pod template has a checksum/secret annotation", re.fullmatch(r"[0-9a-f]{64}", checksum), r.pod_annotations)
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
              checksum == _sha256("generated:%s" % exp["fullname"]), checksum)
        return
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
              checksum == _sha256("existing:%s" % exp["existingSecret"]), checksum)
        return
    sec = secrets.get(ref.get("name"))
    check("cluster.secret: secretKeyRef points to the one rendered Secret, %s" % exp["fullname"],
          sec is not None and ref.get("name") == exp["fullname"] and len(secrets) == 1,
          (ref.get("name"), list(secrets)))
    if sec:
        try:
            value = base64.b64decode(g(sec, "data", "cluster-secret")).decode()
        except Exception:
            value = None
        check("Secret has key cluster-secret (base64)", value is not None)
        check("cluster secret = the value given in cluster.secret", value == exp["secretValue"])
        check("checksum/secret = sha256 of the secret value actually rendered",
              value is not None and checksum == _sha256(value))


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
    for what, planted in PLANTED_SECRETS.items():
        check("the no-secret check catches %s" % what, secret_findings(planted), "not caught")
