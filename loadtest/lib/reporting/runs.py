"""A run of runs.tsv: what kind it is, how it is named, and how two are compared."""
import math

TARGET_NAMES = {"cluster": "cluster (3 nodes)", "cluster-sync": "cluster, fsync per write (3 nodes)",
                "single": "single node", "netty": "bare Netty",
                "webflux": "bare WebFlux", "etcd": "etcd (3 members)",
                "cluster-secure": "cluster with TLS and tokens (3 nodes)",
                "etcd-secure": "etcd with TLS and auth (3 members)"}
# Runs that are not one point of a scenario's rate sweep: the closed-loop wrk run, the cold start.
WRK_SCENARIO, COLD_PREFIX = "wrk-mixed", "cold-"


def run_kind(run):
    if run["scenario"] == WRK_SCENARIO:
        return "wrk"
    if run["scenario"].startswith(COLD_PREFIX):
        return "cold"
    return "k6"


def variant(run):
    """The target's name, with the replicas where it took any."""
    t = TARGET_NAMES.get(run["target"], run["target"])
    return t if run["replicas"] in ("-", "") else f"{t}, replicas {run['replicas']}"


def variants(runs):
    """The runs' variants, in their first run's order."""
    out = []
    for r in runs:
        if variant(r) not in out:
            out.append(variant(r))
    return out


def ratio(a, b):
    if a is None or b is None or not b or math.isnan(a) or math.isnan(b):
        return "-"
    return f"{a / b:.2f}"


def to_float(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return float("nan")
