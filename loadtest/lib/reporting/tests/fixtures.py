"""Small results folders and summaries for the tests, shaped as run.sh, lib.js and common.lua write them."""
import json
import os


def k6_summary(rate=300, requests=6000, p50=1.0, p99=8.0, failed=0.0, dropped=0, statuses=None, p99_ms=10,
               duration="20s", missed=False):
    statuses = statuses if statuses is not None else {201: requests}
    metrics = {
        "http_reqs": {"values": {"count": requests}},
        "http_req_failed": {"values": {"rate": failed}},
        "http_req_duration": {"values": {"med": p50, "p(90)": p50 * 2, "p(99)": p99, "p(99.9)": p99 * 2, "max": p99 * 3},
                              "thresholds": {f"p(99)<{p99_ms}": {"ok": not missed}}},
        "http_req_duration{op:get}": {"values": {"p(99)": p99}},
        "dropped_iterations": {"values": {"count": dropped}},
        "iterations": {"values": {"count": requests}},
    }
    for code, n in statuses.items():
        metrics[f"http_reqs{{status:{code}}}"] = {"values": {"count": n}}
    return {"metrics": metrics, "state": {"testRunDurationMs": 20000},
            "ringkv": {"config": {"scenario": "mixed", "rate": rate, "duration": duration, "p99Ms": p99_ms}}}


def wrk_summary(rate, p99, errors=None):
    return {"requests": int(rate * 20), "rate": rate, "errors": errors or {"connect": 0, "status": 0},
            "latency_ms": {"p50": p99 / 4, "p90": p99 / 2, "p99": p99, "p99.9": p99 * 2, "max": p99 * 3}}


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def results_folder(folder):
    """A cluster and a single node at two rates, a wrk run of the cluster, a warm-up, a fill,
    the samplers' files and one scrape of a node's metrics."""
    write(os.path.join(folder, "env.txt"), "date: 2026-11-28\nmachine: Linux 6.18 x86_64, 2 cores, 23.5 GiB\nclock ticks: 100\n")
    rows = ["target\tscenario\treplicas\trate\tduration\tstart\tend\trc\tsummary\tcsv"]
    t = 1000
    for target, p99s in (("cluster", (6.0, 30.0)), ("single", (2.0, 4.0))):
        for rate, p99 in zip((300, 600), p99s):
            label = f"{target}_mixed_{'2of3' if target == 'cluster' else '-'}_{rate}"
            write(os.path.join(folder, "k6", label + ".json"), json.dumps(k6_summary(rate, rate * 20, p99=p99)))
            rows.append(f"{target}\tmixed\t{'2/3' if target == 'cluster' else '-'}\t{rate}\t20s\t{t}\t{t + 20}\t0\tk6/{label}.json\tk6/{label}.csv.gz")
            t += 30
    files = []
    for i, url in enumerate(("http://127.0.0.1:18080", "http://127.0.0.1:18081", "http://127.0.0.1:18082"), 1):
        files.append(f"wrk/cluster_wrk-mixed_2of3-{i}.txt")
        write(os.path.join(folder, files[-1]), f"# url: {url}\nRunning 20s test\nWRK_SUMMARY {json.dumps(wrk_summary(2000 + i, 10.0 * i))}\n")
    rows.append(f"cluster\twrk-mixed\t2/3\tclosed\t20s\t{t}\t{t + 20}\t0\t{','.join(files)}\t-")
    write(os.path.join(folder, "runs.tsv"), "\n".join(rows) + "\n")
    write(os.path.join(folder, "k6", "cluster_warmup.json"), json.dumps(k6_summary(300)))
    write(os.path.join(folder, "k6", "cluster_fill.json"), json.dumps(k6_summary(0, 2000)))
    rss = [f"{s}\tnode-18080\t11\t{300000 + s}\t{s * 50}" for s in range(1000, t + 21)]
    write(os.path.join(folder, "rss.tsv"), "\n".join(rss) + "\n")
    machine = [f"{s}\t{s * 150}\t{s * 200}\t1.5" for s in range(1000, t + 21)]
    write(os.path.join(folder, "machine.tsv"), "\n".join(machine) + "\n")
    write(os.path.join(folder, "timings.tsv"), "step\tseconds\nchecking tools\t3\n")
    write(os.path.join(folder, "metrics", "cluster_fill-18080.prom"),
          "# HELP x\nringkv_client_not_enough_replicas_total 2.0\n"
          'ringkv_replica_calls_seconds_count{outcome="failure"} 3.0\nringkv_replica_breaker_state{peer="a"} 1.0\n')
