"""vegeta's open-loop runs (run.sh's PEAK_FRACTIONS): the requests it is given, and its results
turned into a summary of the shape lib.js writes, so that the report reads them as k6's.

vegeta sends at a constant rate whatever the answers do (open model), with Go's HTTP client: a
few times less CPU per request than k6's, whose JavaScript would take the shared cores from the
servers at the rates where the tail is to be seen. It cycles through the targets file in order.
"""
import base64
import csv
import gzip
import json
import os
import random

from .k6 import percentile

VALUES = 16  # distinct values the PUTs take in turn, random bytes so that storage cannot compress them


def key(i):
    """As lib.js and common.lua name them: fixed width, k0000000000 ..."""
    return f"k{i:010d}"


def targets(store, nodes, keyspace, value_size, read_ratio, replicas, count, token="", seed=None):
    """count JSON targets of the mixed load (read_ratio GETs, the rest PUTs, keys uniform over the
    keyspace, the nodes in turn), as loadtest/wrk/common.lua sends them to either store."""
    rnd = random.Random(seed)
    values = [bytes(rnd.getrandbits(8) for _ in range(value_size)) for _ in range(VALUES)]
    out = []
    for i in range(count):
        node = nodes[i % len(nodes)]
        k = key(rnd.randrange(keyspace))
        read = rnd.random() < read_ratio
        value = values[i % VALUES]
        if store == "etcd":
            header = {"Content-Type": ["application/json"]}
            if token:
                header["Authorization"] = [token]  # etcd's simple token, bare
            k64 = base64.b64encode(k.encode()).decode()
            body = {"key": k64} if read else {"key": k64, "value": base64.b64encode(value).decode()}
            path = "/v3/kv/range" if read else "/v3/kv/put"
            out.append({"method": "POST", "url": node + path, "header": header,
                        "body": base64.b64encode(json.dumps(body, separators=(",", ":")).encode()).decode()})
            continue
        header = {} if read else {"Content-Type": ["application/octet-stream"]}
        if token:
            header["Authorization"] = [f"Bearer {token}"]
        url = f"{node}/v0/entity?id={k}" + (f"&replicas={replicas}" if replicas else "")
        target = {"method": "GET" if read else "PUT", "url": url, "header": header}
        if not read:
            target["body"] = base64.b64encode(value).decode()
        out.append(target)
    return out


def write_targets(path, **kw):
    with open(path, "w") as f:
        for t in targets(**kw):
            f.write(json.dumps(t, separators=(",", ":")) + "\n")


def read_results(path):
    """vegeta encode --to csv's rows (gzip or not): timestamp ns, status, latency ns, bytes out,
    bytes in, error, body, attack, seq, method, url, headers. Returns (start ns, status, latency
    ms, op) for each, in the file's order."""
    opener = gzip.open if path.endswith(".gz") else open
    out = []
    with opener(path, "rt", newline="") as f:
        for row in csv.reader(f):
            if len(row) < 11:
                continue
            method, url = row[9], row[10]
            op = "get" if method == "GET" or url.endswith("/v3/kv/range") else "put"
            out.append((int(row[0]), int(row[1]), int(row[2]) / 1e6, op))
    return out


def summary(results_csv, scenario, rate, duration_s, settle_s=0):
    """A k6-shaped summary (the metrics loadtest/reporting/k6.py reads) of a vegeta run: requests,
    answers that were not 2xx (transport errors have status 0) as failed, the latency percentiles of
    all requests and each operation's p99, and as dropped what was offered but never sent (vegeta
    falls behind only when the client cannot keep the rate). Requests started in the first settle_s
    seconds are left out, as wrk2 leaves out its calibration: while the connections open."""
    rows = read_results(results_csv)
    first = min((r[0] for r in rows), default=0)
    counted = [r for r in rows if r[0] >= first + settle_s * 1e9]
    latencies, by_op, statuses, failed = [], {}, {}, 0
    for _, status, ms, op in counted:
        latencies.append(ms)
        by_op.setdefault(op, []).append(ms)
        statuses[status] = statuses.get(status, 0) + 1
        failed += not 200 <= status < 300
    latencies.sort()
    n = len(latencies)
    metrics = {
        "http_reqs": {"values": {"count": n}},
        "http_req_failed": {"values": {"rate": failed / n if n else 0}},
        "http_req_duration": {"values": {"med": percentile(latencies, 50), "p(90)": percentile(latencies, 90),
                                         "p(99)": percentile(latencies, 99), "p(99.9)": percentile(latencies, 99.9),
                                         "max": latencies[-1] if latencies else float("nan")}},
        "dropped_iterations": {"values": {"count": max(0, round(rate * duration_s) - n)}},
    }
    for op, values in sorted(by_op.items()):
        metrics[f"http_req_duration{{op:{op}}}"] = {"values": {"p(99)": percentile(sorted(values), 99)}}
    for status, count in statuses.items():
        metrics[f"http_reqs{{status:{status}}}"] = {"values": {"count": count}}
    return {"metrics": metrics, "state": {"testRunDurationMs": duration_s * 1000},
            "ringkv": {"config": {"scenario": scenario, "rate": rate, "duration": f"{duration_s:g}s",
                                  "client": "vegeta", "settle": f"{settle_s:g}s", "settling": len(rows) - n}}}


def write_summary(results_csv, out_json, scenario, rate, duration_s, settle_s):
    with open(out_json, "w") as f:
        json.dump(summary(results_csv, scenario, rate, duration_s, settle_s), f)


def write_targets_from_env(path, store, nodes):
    """The targets of run.sh's mixed load, its settings read from the environment as wrk's are."""
    env = os.environ.get
    write_targets(path, store=store, nodes=nodes.split(","), keyspace=int(env("KEYSPACE", "5000")),
                  value_size=int(env("VALUE_SIZE", "1024")), read_ratio=float(env("READ_RATIO", "0.5")),
                  replicas=env("REPLICAS", ""), count=int(env("VEGETA_TARGETS", "20000")),
                  token=env("ETCD_TOKEN", "") if store == "etcd" else env("RINGKV_TOKEN", ""))
