#!/usr/bin/env python3
"""A picture of the Grafana dashboard (helm/ringkv/dashboards/ringkv.json) from a real run,
where no Prometheus or Grafana runs: the nodes' /actuator/prometheus is scraped every few
seconds and the dashboard's main panels are computed from the samples as Prometheus would
(rate over the scrape interval, histogram_quantile over the buckets) and drawn with matplotlib.

  dashboard_picture.py record --api URL,... --metrics URL,... --seconds 150 --out run.jsonl
      light load (PUT, GET; a tenth of the GETs at replicas=3/3, which answer 504 while a
      replica is down) on the API URLs, and a scrape of every metrics URL every --step seconds.
      For the breakers, the 504s and the hints to have something to show, stop one node during
      the run and start it again (leave it out of --api, as a Service would once it is not ready).
  dashboard_picture.py plot run.jsonl out.png [--rename URL=name,...] [--title TEXT]
  dashboard_picture.py names run.jsonl      every metric name the nodes exported (the fixture
                                            helm/checks/exported-metrics.txt)
"""
import argparse
import json
import os
import random
import re
import sys
import threading
import time
import urllib.error
import urllib.request

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
# Seconds between two scrapes of every node. The nodes of one round are scraped one after the
# other, so sums across nodes gather their samples by slot of this length.
STEP = 5


def parse(text):
    """Exposition text -> {(name, frozenset(labels)): value}."""
    samples = {}
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m:
            labels = frozenset(LABEL.findall(m.group(3) or ""))
            samples[(m.group(1), labels)] = float(m.group(4))
    return samples


def http(method, url, body=None):
    req = urllib.request.Request(url, data=body, method=method)
    try:
        with urllib.request.urlopen(req, timeout=2) as resp:
            resp.read()
            return resp.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return 0


def record(args):
    apis, targets = args.api.split(","), args.metrics.split(",")
    stop = threading.Event()

    def load(seed):
        # About 15 requests per second per thread at most: light on a shared 2-core machine.
        rnd = random.Random(seed)
        while not stop.is_set():
            api, key = rnd.choice(apis), f"k{rnd.randrange(2000)}"
            if rnd.random() < 0.4:
                http("PUT", f"{api}/v0/entity?id={key}", os.urandom(256))
            else:
                replicas = "3/3" if rnd.random() < 0.1 else "2/3"
                http("GET", f"{api}/v0/entity?id={key}&replicas={replicas}")
            time.sleep(0.05)

    threads = [threading.Thread(target=load, args=(i,), daemon=True) for i in range(3)]
    for t in threads:
        t.start()
    start = time.time()
    with open(args.out, "w") as out:
        while (now := time.time()) - start < args.seconds:
            for target in targets:
                try:
                    with urllib.request.urlopen(f"{target}/actuator/prometheus", timeout=2) as resp:
                        text = resp.read().decode()
                except OSError:
                    text = None  # a stopped node: the scrape fails, as Prometheus's would (up 0)
                out.write(json.dumps({"t": now - start, "target": target, "text": text}) + "\n")
            out.flush()
            time.sleep(max(0.0, args.step - (time.time() - now)))
    stop.set()


def load_run(path):
    """-> {target: [(t, samples or None)]}"""
    run = {}
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            run.setdefault(rec["target"], []).append(
                (rec["t"], parse(rec["text"]) if rec["text"] is not None else None))
    return run


def names(args):
    seen = set()
    for scrapes in load_run(args.run).values():
        for _, samples in scrapes:
            seen.update(name for name, _ in (samples or {}))
    print("\n".join(sorted(seen)))


def select(samples, name, **match):
    """{labels dict as sorted tuple: value} of the series of one name whose labels match."""
    out = {}
    for (n, labels), v in (samples or {}).items():
        d = dict(labels)
        if n == name and all(d.get(k) == want for k, want in match.items()):
            out[tuple(sorted(d.items()))] = v
    return out


def slot(t):
    return round(t / STEP) * STEP


def rates(run, name, by, **match):
    """sum by (by) (rate(name[step])) over all targets -> {group: [(t, per second)]}."""
    series = {}
    for scrapes in run.values():
        for (t0, s0), (t1, s1) in zip(scrapes, scrapes[1:]):
            if s0 is None or s1 is None:
                continue
            before = select(s0, name, **match)
            groups = {}
            for labels, v in select(s1, name, **match).items():
                d = dict(labels)
                key = tuple(d.get(b, "") for b in by)
                delta = v - before.get(labels, 0.0)  # a series born in the interval counts from 0
                groups[key] = groups.get(key, 0.0) + max(delta, 0.0) / (t1 - t0)
            for key, r in groups.items():
                series.setdefault(key, {}).setdefault(slot(t1), 0.0)
                series[key][slot(t1)] += r
    return {k: sorted(v.items()) for k, v in series.items()}


def quantile(q, buckets):
    """histogram_quantile over {le: cumulative count}, linear within the bucket as Prometheus."""
    les = sorted(buckets)
    total = buckets[les[-1]]
    if total <= 0:
        return None
    rank, prev_le, prev_count = q * total, 0.0, 0.0
    for le in les:
        if buckets[le] >= rank:
            if le == float("inf"):
                return prev_le
            return prev_le + (le - prev_le) * (rank - prev_count) / max(buckets[le] - prev_count, 1e-12)
        prev_le, prev_count = le, buckets[le]
    return les[-2]


def latency(run, name, q, by, **match):
    """histogram_quantile(q, sum by (le, by) (rate(name_bucket[step]))) -> {group: [(t, s)]}."""
    per_time = {}
    for scrapes in run.values():
        for (t0, s0), (t1, s1) in zip(scrapes, scrapes[1:]):
            if s0 is None or s1 is None:
                continue
            before = select(s0, name + "_bucket", **match)
            for labels, v in select(s1, name + "_bucket", **match).items():
                d = dict(labels)
                key = tuple(d.get(b, "") for b in by)
                buckets = per_time.setdefault(slot(t1), {}).setdefault(key, {})
                le = float(d["le"])
                buckets[le] = buckets.get(le, 0.0) + max(v - before.get(labels, 0.0), 0.0)
    series = {}
    for t, groups in sorted(per_time.items()):
        for key, buckets in groups.items():
            value = quantile(q, buckets)
            if value is not None:
                series.setdefault(key, []).append((t, value))
    return series


def gauges(run, name, label, reduce=sum, **match):
    """One line per target (node) and label value: {(node, label): [(t, value)]}."""
    series = {}
    for target, scrapes in run.items():
        node = target
        for t, samples in scrapes:
            if samples is None:  # a gap in the node's lines while it does not answer
                for key in [k for k in series if k[0] == node]:
                    series[key].append((t, float("nan")))
                continue
            groups = {}
            for labels, v in select(samples, name, **match).items():
                groups.setdefault(dict(labels).get(label, ""), []).append(v)
            for key, values in groups.items():
                series.setdefault((node, key), []).append((t, reduce(values)))
    return series


def plot(args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run = load_run(args.run)
    renames = [pair.split("=", 1) for pair in args.rename.split(",") if pair]
    with open(args.dashboard) as f:
        titles = {p["title"] for p in json.load(f)["panels"] if p.get("type") != "row"}
    panels = [
        ("Requests per second by operation and status",
         rates(run, "ringkv_client_requests_seconds_count", ("operation", "status")), "req/s"),
        ("p99 latency by operation and status",
         latency(run, "ringkv_client_requests_seconds", 0.99, ("operation", "status")), "seconds"),
        ("504 (not enough replicas) per second",
         rates(run, "ringkv_client_not_enough_replicas_total", ("operation",)), "req/s"),
        ("Replica calls per second by peer and outcome",
         rates(run, "ringkv_replica_calls_seconds_count", ("peer", "outcome")), "calls/s"),
        ("Breaker state per peer (0 closed, 1 half-open, 2 open)",
         gauges(run, "ringkv_replica_breaker_state", "peer", reduce=max), "state"),
        ("Hints stored, replayed and dropped per second",
         {(what,): rates(run, f"ringkv_hints_{what}_total", ()).get((), [])
          for what in ("stored", "replayed", "dropped")}, "hints/s"),
        ("Hints pending", gauges(run, "ringkv_hints_pending", ""), "hints"),
        ("RocksDB live SST and memtable bytes",
         {**{(n, "sst"): v for (n, _), v in gauges(run, "ringkv_storage_sst_live_bytes", "").items()},
          **{(n, "memtable"): v for (n, _), v in gauges(run, "ringkv_storage_memtable_bytes", "").items()}},
         "bytes"),
        ("RocksDB keys (estimated)", gauges(run, "ringkv_storage_keys_estimated", ""), "keys"),
        ("RocksDB block cache hit ratio",
         gauges(run, "ringkv_storage_block_cache_hit_ratio", ""), "ratio"),
        ("JVM heap used", gauges(run, "jvm_memory_used_bytes", "area", area="heap"), "bytes"),
        ("GC pause time per second",
         rates(run, "jvm_gc_pause_seconds_sum", ("gc",)), "s/s"),
    ]
    missing = [title for title, _, _ in panels if title not in titles]
    if missing:
        sys.exit(f"not panels of {args.dashboard}: {missing}")
    fig, axes = plt.subplots(6, 2, figsize=(16, 24))
    for ax, (title, series, unit) in zip(axes.flat, panels):
        for key, points in sorted(series.items()):
            if points:
                label = " ".join(k for k in key if k)
                for url, name in renames:
                    label = label.replace(url, name)
                ax.plot([p[0] for p in points], [p[1] for p in points], label=label or "all")
        ax.set_title(title, fontsize=11)
        ax.set_ylabel(unit)
        ax.set_xlabel("seconds into the run")
        ax.grid(alpha=0.3)
        if series:
            ax.legend(fontsize=7, ncol=2)
    fig.suptitle(args.title, fontsize=13)
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    fig.savefig(args.out, dpi=70)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("--api", required=True)
    r.add_argument("--metrics", required=True)
    r.add_argument("--seconds", type=float, default=150)
    r.add_argument("--step", type=float, default=STEP)
    r.add_argument("--out", required=True)
    pl = sub.add_parser("plot")
    pl.add_argument("run")
    pl.add_argument("out")
    pl.add_argument("--dashboard", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "helm", "ringkv", "dashboards", "ringkv.json"))
    pl.add_argument("--title", default="ringkv dashboard, main panels")
    pl.add_argument("--rename", default="", help="URL=name,... shortens the nodes' and peers' URLs in the legends")
    n = sub.add_parser("names")
    n.add_argument("run")
    args = p.parse_args()
    {"record": record, "plot": plot, "names": names}[args.cmd](args)


if __name__ == "__main__":
    main()
