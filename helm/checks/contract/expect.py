"""What the checks expect of a render: helm/verify.sh names only what differs from the chart's
defaults rendered as release ringkv in namespace default."""
import json

# The three Secrets: the cluster secret, the tokens, the TLS certificate (no cert-manager in helm template).
DEFAULT_KINDS = ["ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding", "Secret", "Secret", "Secret",
                 "Service", "Service", "StatefulSet", "PodDisruptionBudget", "NetworkPolicy"]

# Keys checked only in some renders (absent = the default): directMemoryPercent (8), storageMemoryPercent (15), existingSecret,
# secretValue, previousSecret, tokensSecret, tlsSecret (the chart's own), membership (true), serviceAccountAutomount (false), terminationGracePeriodSeconds (60),
# drainDelay ("5s"), volumePermissionsImage (the app image), nodeZone (true: zones from the Node label, with
# the ClusterRole), zonesByOrdinal (none: RINGKV_CLUSTER_ZONES_BY_ORDINAL unset).
RENDER = {
    "namespace": "default", "fullname": "ringkv", "replicas": 3, "imageTag": "0.1.0",
    "clusterDomain": "cluster.local", "httpPort": 8080, "clusterPort": 7070, "managementPort": 9090,
    "servicePort": 8080, "memoryLimit": "768Mi", "heapMiB": 253, "persistence": True, "size": "10Gi",
    "storageClassName": None, "volumePermissions": False, "networkPolicy": True, "managementOpen": False, "antiAffinity": "soft",
    "spread": True, "tests": True, "testImage": "grafana/k6:1.8.1", "security": True, "tls": True, "departure": "45s", "kinds": DEFAULT_KINDS,
    "tlsValidityDays": 730,
}

# The loadtest Job with loadtest.enabled=true and nothing else; optional: env, networkPolicy.
LOADTEST = {
    "enabled": True, "namespace": "default", "fullname": "ringkv", "servicePort": 8080,
    "image": "grafana/k6:1.8.1", "scenario": "mixed", "rate": "200", "duration": "30s", "replicas": "2/3",
    "keyspace": "100000", "distribution": "", "valueSize": "1024", "p99Ms": "10", "maxErrorRate": "0.01",
    "fill": "none", "activeDeadlineSeconds": 900, "ttl": None, "security": True, "tls": True,
    "report": True, "reportImage": "ringkv:0.1.0", "reportPeriod": "1s",
}


def expectation(defaults, overrides_json):
    """defaults with the keys of the JSON object overrides_json put over them."""
    return {**defaults, **json.loads(overrides_json)}
