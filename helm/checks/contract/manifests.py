"""Reading rendered manifests: YAML documents, paths into them, label selectors, quantities, names."""
import re

import yaml

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def g(obj, *path, default=None):
    """obj[path[0]][path[1]]..., or default where a key or index is missing."""
    for p in path:
        if isinstance(obj, dict) and p in obj:
            obj = obj[p]
        elif isinstance(obj, list) and isinstance(p, int) and -len(obj) <= p < len(obj):
            obj = obj[p]
        else:
            return default
    return obj


def of_kind(docs, kind):
    return [d for d in docs if d.get("kind") == kind]


def subset(sel, labels):
    """Whether the selector sel (not empty) selects labels."""
    return bool(sel) and all(labels.get(k) == v for k, v in sel.items())


def mib(q):
    """A memory quantity <n>Mi or <n>Gi in MiB, or None."""
    m = re.fullmatch(r"(\d+)(Mi|Gi)", str(q))
    if not m:
        return None
    return int(m.group(1)) * (1024 if m.group(2) == "Gi" else 1)


def release_selectors(docs):
    """The selectors of the Services, PodDisruptionBudgets and StatefulSets: a pod they select is one
    of the release's ringkv pods."""
    sels = [g(d, "spec", "selector") for d in of_kind(docs, "Service")]
    sels += [g(d, "spec", "selector", "matchLabels") for d in docs
             if d.get("kind") in ("PodDisruptionBudget", "StatefulSet")]
    return [s for s in sels if s]
