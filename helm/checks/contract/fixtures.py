"""What the unit tests check: k8s/ringkv.yaml and k8s/loadtest/loadtest.yaml, the chart's default
renders that k8s/generate commits (with existing Secrets: it holds none), with the namespace a release
would have put back."""
import os

from . import expect
from .manifests import load, of_kind
from .report import collect, failed_names

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
# k8s/generate leaves the helm test hook out, names existing Secrets, and reads no Node (no cluster-scoped
# object: its name and its binding's subject would need the namespace, which the base leaves to the overlay).
K8S_EXPECT = {**expect.RENDER, "tests": False, "existingSecret": "ringkv-cluster", "tokensSecret": "ringkv-tokens",
              "tlsSecret": "ringkv-tls", "nodeZone": False,
              "kinds": [k for k in expect.DEFAULT_KINDS if k not in ("Secret", "ClusterRole", "ClusterRoleBinding")]}


def k8s_render(*path):
    docs = load(os.path.join(ROOT, "k8s", *path))
    for d in docs:
        d["metadata"]["namespace"] = "default"
    return docs


def default_render():
    return k8s_render("ringkv.yaml")


def env(docs, name):
    containers = of_kind(docs, "StatefulSet")[0]["spec"]["template"]["spec"]["containers"]
    return [e for e in containers[0]["env"] if e["name"] == name][0]


def failed(run, *args):
    """The names of the checks run(*args) failed."""
    return failed_names(collect(run, *args))
