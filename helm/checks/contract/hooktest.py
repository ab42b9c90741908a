"""The helm test hook: a k6 Pod running files/helm-test.js (from a ConfigMap of the release) that PUTs, GETs and
DELETEs a key through the client Service, over TLS with the nodes' CA and with the admin token when the
chart turns them on. helm/verify.sh also runs the script (hook_script) with k6 against a mock of the API."""
import os
import sys

from .manifests import g, load, release_selectors, subset
from .report import check

CHART = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "ringkv")


def is_test_hook(d):
    return g(d, "metadata", "annotations", "helm.sh/hook") == "test"


def check_test_hook(r):
    exp = r.exp
    tests = [d for d in r.hooks if is_test_hook(d)]
    if not exp["tests"]:
        check("no helm test hook", not tests, tests)
        return
    pods = [d for d in tests if d["kind"] == "Pod"]
    # The script's ConfigMap is no hook: `helm test --logs` reads every test hook's logs as a Pod's.
    maps = [d for d in r.main if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "%s-test" % exp["fullname"]]
    check("one helm test hook, a Pod; its script in the release's ConfigMap %s-test" % exp["fullname"],
          len(pods) == 1 and len(maps) == 1 and len(tests) == 1, tests)
    if len(pods) != 1 or len(maps) != 1:
        return
    t, cm = pods[0], maps[0]
    labels = g(t, "metadata", "labels") or {}
    check("test pod is not selected by the Services / PDB / StatefulSet",
          not any(subset(s, labels) for s in release_selectors(r.main)))
    tc = g(t, "spec", "containers", 0) or {}
    env = {e["name"]: e for e in tc.get("env", [])}
    check("test image is %s (not latest)" % exp["testImage"], tc.get("image") == exp["testImage"], tc.get("image"))
    scheme = "https" if exp["tls"] else "http"
    url = "%s://%s:%d" % (scheme, exp["fullname"], exp["servicePort"])
    check("test targets the client Service: BASE_URL = %s" % url, g(env, "BASE_URL", "value") == url, env.get("BASE_URL"))
    check("test runs k6 on /scripts/helm-test.js", tc.get("args", [])[:1] == ["run"]
          and tc.get("args", [])[-1:] == ["/scripts/helm-test.js"] and not tc.get("command"), tc.get("args"))
    with open(os.path.join(CHART, "files", "helm-test.js")) as f:
        script = f.read()
    check("the ConfigMap holds files/helm-test.js byte for byte", g(cm, "data", "helm-test.js") == script)
    vols = {v["name"]: v for v in g(t, "spec", "volumes", default=[])}
    mounts = {m["mountPath"]: m["name"] for m in tc.get("volumeMounts", [])}
    check("the script's ConfigMap is mounted at /scripts",
          g(vols.get(mounts.get("/scripts")) or {}, "configMap", "name") == cm["metadata"]["name"], (mounts, vols))
    token = g(env, "RINGKV_TOKEN", "valueFrom", "secretKeyRef")
    if exp["security"]:
        # The least role for a PUT, GET and DELETE: write, not admin.
        want = {"name": exp.get("tokensSecret") or "%s-tokens" % exp["fullname"], "key": "write-token"}
        check("RINGKV_TOKEN from %s/write-token" % want["name"], token == want, token)
    else:
        check("security off: no RINGKV_TOKEN", "RINGKV_TOKEN" not in env, env.get("RINGKV_TOKEN"))
    if exp["tls"]:
        ca = g(env, "SSL_CERT_FILE", "value") or ""
        tls_name = exp.get("tlsSecret") or "%s-tls" % exp["fullname"]
        check("SSL_CERT_FILE is the ca.crt of %s, mounted" % tls_name,
              ca.endswith("/ca.crt") and g(vols.get(mounts.get(os.path.dirname(ca))) or {}, "secret", "secretName") == tls_name,
              (ca, mounts))
    else:
        check("TLS off: no SSL_CERT_FILE", "SSL_CERT_FILE" not in env)
    inits = g(t, "spec", "initContainers", default=[])
    check("test pod first waits for the release: init container wait-for-release on %s/v0/status" % url,
          [c.get("name") for c in inits] == ["wait-for-release"]
          and g(next((e for e in inits[0].get("env", []) if e["name"] == "BASE_URL"), {}), "value") == url,
          [c.get("name") for c in inits])
    check("test pod: restartPolicy Never, non-root, read-only root fs",
          g(t, "spec", "restartPolicy") == "Never" and g(t, "spec", "securityContext", "runAsNonRoot") is True
          and g(tc, "securityContext", "readOnlyRootFilesystem") is True)


def hook_script(path):
    """Prints the k6 script of the helm test hook, for running it outside Kubernetes."""
    for d in load(path):
        if d.get("kind") == "ConfigMap" and "helm-test.js" in (d.get("data") or {}):
            sys.stdout.write(d["data"]["helm-test.js"])
