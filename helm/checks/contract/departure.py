"""What the nodes are told of the StatefulSet they belong to (membership from its spec.replicas), of
the shutdown drain, and of the hand-over when a scale-down removes them (cluster.departure), whose
timeout must fit the grace period."""
import re

from .report import check


def check_membership_and_departure(r):
    exp, val, sts_name = r.exp, r.val, r.sts["metadata"]["name"]
    if exp.get("membership", True):
        check("membership: RINGKV_CLUSTER_DISCOVERY_STATEFUL_SET = the StatefulSet's own name (%s)" % sts_name,
              val("RINGKV_CLUSTER_DISCOVERY_STATEFUL_SET") == sts_name, val("RINGKV_CLUSTER_DISCOVERY_STATEFUL_SET"))
    else:
        check("membership off: no RINGKV_CLUSTER_DISCOVERY_STATEFUL_SET",
              "RINGKV_CLUSTER_DISCOVERY_STATEFUL_SET" not in r.env_names)
    drain = val("RINGKV_SHUTDOWN_DRAIN_DELAY")
    want_drain = exp.get("drainDelay", "5s")
    check("shutdown: RINGKV_SHUTDOWN_DRAIN_DELAY = %s" % want_drain, drain == want_drain, drain)
    drain_s = int(drain[:-1]) if re.fullmatch(r"[0-9]+s", str(drain or "")) else 0
    if not exp["departure"]:
        departure_env = [n for n in r.env_names if n.startswith("RINGKV_CLUSTER_DEPARTURE_")]
        check("departure off: no RINGKV_CLUSTER_DEPARTURE_* env var", not departure_env, departure_env)
        return
    check("departure: RINGKV_CLUSTER_DEPARTURE_STATEFUL_SET = the StatefulSet's own name (%s)" % sts_name,
          val("RINGKV_CLUSTER_DEPARTURE_STATEFUL_SET") == sts_name, val("RINGKV_CLUSTER_DEPARTURE_STATEFUL_SET"))
    timeout = val("RINGKV_CLUSTER_DEPARTURE_TIMEOUT")
    check("departure: RINGKV_CLUSTER_DEPARTURE_TIMEOUT = %s" % exp["departure"], timeout == exp["departure"], timeout)
    m = re.fullmatch(r"([1-9][0-9]*)s", str(timeout or ""))
    grace_s = r.pod.get("terminationGracePeriodSeconds")
    check("departure: timeout %s and drain %ss at least 10s below terminationGracePeriodSeconds (%s)"
          % (timeout, drain_s, grace_s),
          m and isinstance(grace_s, int) and int(m.group(1)) + drain_s + 10 <= grace_s, (timeout, drain_s, grace_s))
