"""The helm test hook: a busybox Pod that PUTs, GETs and DELETEs a key through the client Service.
helm/verify.sh also runs its script (hook_script) against a mock of the API."""
import sys

from .manifests import g, load, release_selectors, subset
from .report import check


def is_test_hook(d):
    return g(d, "metadata", "annotations", "helm.sh/hook") == "test"


def check_test_hook(r):
    exp = r.exp
    tests = [d for d in r.hooks if is_test_hook(d)]
    if not exp["tests"]:
        check("no helm test hook", not tests, tests)
        return
    check("one helm test hook Pod", len(tests) == 1 and tests[0]["kind"] == "Pod", tests)
    if len(tests) != 1:
        return
    t = tests[0]
    labels = g(t, "metadata", "labels") or {}
    check("test pod is not selected by the Services / PDB / StatefulSet",
          not any(subset(s, labels) for s in release_selectors(r.main)))
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


def hook_script(path):
    """Prints the shell script of the helm test hook Pod, for running it outside Kubernetes."""
    for d in load(path):
        if d.get("kind") == "Pod" and is_test_hook(d):
            c = d["spec"]["containers"][0]
            sys.stdout.write((c.get("command", []) + c.get("args", []))[-1])
