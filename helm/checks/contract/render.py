"""The application contract of one render of the chart, which helm lint and the Kubernetes schemas
cannot know: render_checks runs the checks of each concern, in their modules, on a Render."""
from . import departure, hooktest, memory, netpol, rbac, secret, volumes, workload
from .manifests import g, of_kind
from .report import check


class Render:
    """One render and what the checks look up in it: the release's objects (hooks apart), its one
    StatefulSet, the pods' template and the ringkv container (None where the render lacks them)."""

    def __init__(self, docs, exp):
        self.docs, self.exp = docs, exp
        self.hooks = [d for d in docs if "helm.sh/hook" in (g(d, "metadata", "annotations") or {})]
        self.main = [d for d in docs if d not in self.hooks]
        stss = self.kinds("StatefulSet")
        self.sts = stss[0] if len(stss) == 1 else None
        self.spec = self.sts["spec"] if self.sts else {}
        self.pod = g(self.spec, "template", "spec") or {}
        self.pod_labels = g(self.spec, "template", "metadata", "labels") or {}
        self.pod_annotations = g(self.spec, "template", "metadata", "annotations") or {}
        self.services = {d["metadata"]["name"]: d for d in self.kinds("Service")}
        self.headless_name = self.spec.get("serviceName")
        self.headless = self.services.get(self.headless_name)
        self.containers = {c["name"]: c for c in self.pod.get("containers", [])}
        self.container = self.containers.get("ringkv")
        c = self.container or {}
        self.image = c.get("image", "")
        self.ports = {p.get("name"): p.get("containerPort") for p in c.get("ports", [])}
        self.env_list = c.get("env", [])
        self.env_names = [e["name"] for e in self.env_list]
        self.env = {e["name"]: e for e in self.env_list}

    def kinds(self, kind):
        return of_kind(self.main, kind)

    def val(self, name):
        """The literal value of the container's env var name."""
        return g(self.env, name, "value")


def render_checks(docs, exp):
    r = Render(docs, exp)
    workload.check_objects(r)
    check("exactly one StatefulSet", r.sts is not None, len(r.kinds("StatefulSet")))
    if r.sts is None:
        return
    workload.check_statefulset(r)
    workload.check_services(r)
    check("container 'ringkv' exists", r.container is not None, list(r.containers))
    if r.container is None:
        return
    workload.check_container(r)
    workload.check_env(r)
    secret.check_cluster_secret(r)
    secret.check_tokens_and_tls(r)
    workload.check_probes(r)
    memory.check_heap(r)
    workload.check_security(r)
    volumes.check_volumes(r)
    rbac.check_service_account(r)
    rbac.check_api_access(r)
    departure.check_membership_and_departure(r)
    workload.check_disruption_and_scheduling(r)
    netpol.check_network_policy(r)
    hooktest.check_test_hook(r)
