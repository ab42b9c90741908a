#!/usr/bin/env python3
"""Turns a loadtest/run.sh results folder into report.md and PNG charts.

    python3 loadtest/report.py loadtest/results/<timestamp>      report.md + charts/*.png
    python3 loadtest/report.py --timeline k6.csv.gz out.csv      per-second buckets of a k6 CSV
    python3 loadtest/report.py --line summary.json               one line about a k6 summary

The folder holds what run.sh wrote: env.txt, runs.tsv (one line per k6 run), k6/<run>.json
(handleSummary's JSON), k6/<run>.timeline.csv (per-second latency buckets, made from k6's
--out csv), rss.tsv (epoch, process, pid, VmRSS KiB, CPU ticks, every second), machine.tsv (epoch, busy and
total CPU jiffies, 1-minute load) and timings.tsv.
Charts need matplotlib; without it the report still has every table.
"""
import csv
import gzip
import json
import math
import os
import re
import sys
from collections import defaultdict

PCTS = [("p50", "med"), ("p90", "p(90)"), ("p99", "p(99)"), ("p99.9", "p(99.9)"), ("max", "max")]
TARGET_NAMES = {"cluster": "cluster (3 nodes)", "single": "single node", "netty": "bare Netty"}


def parse_duration(text):
    """k6 durations: 30s, 1m30s, 500ms, 2h."""
    total, found = 0.0, False
    for num, unit in re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text):
        found = True
        total += float(num) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]
    return total if found else float(text)


def percentile(sorted_values, p):
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, int(math.ceil(p / 100.0 * len(sorted_values))) - 1))
    return sorted_values[k]


# ---- per-second timeline from k6's CSV output -------------------------------------------------------

def timeline(csv_path, out_path):
    opener = gzip.open if csv_path.endswith(".gz") else open
    buckets = defaultdict(list)
    failed = defaultdict(int)
    with opener(csv_path, "rt", newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        col = {name: i for i, name in enumerate(header)}
        i_name, i_time, i_value = col["metric_name"], col["timestamp"], col["metric_value"]
        i_expected = col.get("expected_response")
        for row in reader:
            if row[i_name] != "http_req_duration":
                continue
            ts = int(row[i_time])
            sec = ts // 1000 if ts > 10**11 else ts  # unix_milli or unix seconds
            buckets[sec].append(float(row[i_value]))
            if i_expected is not None and row[i_expected] == "false":
                failed[sec] += 1
    with open(out_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["second", "requests", "failed", "p50", "p90", "p99", "max"])
        if buckets:
            first = min(buckets)
            for sec in range(first, max(buckets) + 1):
                vals = sorted(buckets.get(sec, []))
                w.writerow([sec - first, len(vals), failed.get(sec, 0)]
                           + [f"{percentile(vals, p):.3f}" for p in (50, 90, 99)]
                           + [f"{vals[-1]:.3f}" if vals else "nan"])


def read_timeline(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            rows.append({k: float(v) for k, v in r.items()})
    return rows


# ---- summaries --------------------------------------------------------------------------------------

def load_summary(path):
    with open(path) as f:
        return json.load(f)


def metric(summary, name, key, default=None):
    m = summary.get("metrics", {}).get(name)
    if not m:
        return default
    return m.get("values", {}).get(key, default)


def status_counts(summary):
    out = {}
    for name, m in summary.get("metrics", {}).items():
        mt = re.fullmatch(r"http_reqs\{status:(\d+)\}", name)
        if mt and m.get("values", {}).get("count", 0):
            out[int(mt.group(1))] = int(m["values"]["count"])
    return dict(sorted(out.items()))


def failed_thresholds(summary):
    out = []
    for name, m in summary.get("metrics", {}).items():
        for src, res in (m.get("thresholds") or {}).items():
            if not res.get("ok", True):
                out.append(f"{name} {src}")
    return out


def summarize(summary, duration_s=None):
    cfg = summary.get("ringkv", {}).get("config", {})
    if duration_s is None:
        duration_s = parse_duration(cfg.get("duration", "0s")) or summary["state"]["testRunDurationMs"] / 1000
    reqs = metric(summary, "http_reqs", "count", 0)
    out = {
        "requests": reqs,
        "achieved": reqs / duration_s if duration_s else float("nan"),
        "errors": 100.0 * (metric(summary, "http_req_failed", "rate", 0) or 0),
        "dropped": int(metric(summary, "dropped_iterations", "count", 0) or 0),
        "statuses": status_counts(summary),
        "failed_thresholds": failed_thresholds(summary),
        "ops": {},
    }
    for label, key in PCTS:
        out[label] = metric(summary, "http_req_duration", key, float("nan"))
    for name in summary.get("metrics", {}):
        mt = re.fullmatch(r"http_req_duration\{op:(\w+)\}", name)
        if mt:
            out["ops"][mt.group(1)] = metric(summary, name, "p(99)", float("nan"))
    return out


def fmt_ms(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def fmt_statuses(st):
    return " ".join(f"{k}:{v}" for k, v in st.items()) or "-"


def line(path):
    s = load_summary(path)
    r = summarize(s)
    cfg = s.get("ringkv", {}).get("config", {})
    ops = "".join(f" {op}-p99 {fmt_ms(v)}" for op, v in r["ops"].items())
    return (f"{cfg.get('scenario', '?')}: offered {cfg.get('rate', '?')}/s achieved {r['achieved']:.1f}/s, "
            f"p50 {fmt_ms(r['p50'])} p99 {fmt_ms(r['p99'])} p99.9 {fmt_ms(r['p99.9'])} max {fmt_ms(r['max'])} ms{ops}, "
            f"errors {r['errors']:.2f}%, statuses {fmt_statuses(r['statuses'])}"
            + (f", dropped {r['dropped']}" if r["dropped"] else "")
            + (", THRESHOLDS MISSED" if r["failed_thresholds"] else ""))


# ---- the report -------------------------------------------------------------------------------------

def read_tsv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def read_rss(path):
    samples, ticks = [], []  # (epoch, name, kib), (epoch, name, cpu ticks)
    if os.path.exists(path):
        with open(path) as f:
            for ln in f:
                parts = ln.rstrip("\n").split("\t")
                if len(parts) >= 4 and parts[3].isdigit():
                    samples.append((int(parts[0]), parts[1], int(parts[3])))
                if len(parts) >= 5 and parts[4].isdigit():
                    ticks.append((int(parts[0]), parts[1], int(parts[4])))
    return samples, ticks


def read_machine(path):
    rows = []  # (epoch, busy jiffies, total jiffies, load1)
    if os.path.exists(path):
        with open(path) as f:
            for ln in f:
                p = ln.split()
                if len(p) == 4:
                    rows.append((int(p[0]), int(p[1]), int(p[2]), float(p[3])))
    return rows


def cpu_percent(ticks, target, start, end, hz):
    """CPU used by each process of the target during [start, end], in % of one core."""
    first, last = {}, {}
    for t, name, v in ticks:
        if start <= t <= end + 1 and name.startswith(process_prefix(target)):
            first.setdefault(name, (t, v))
            last[name] = (t, v)
    out = {}
    for name, (t0, v0) in sorted(first.items()):
        t1, v1 = last[name]
        if t1 > t0:
            out[name] = 100.0 * (v1 - v0) / hz / (t1 - t0)
    return out


def machine_busy(machine, start, end):
    """The machine's CPU busy % over [start, end] (all cores), and its highest 1-min load."""
    rows = [r for r in machine if start <= r[0] <= end + 1]
    if len(rows) < 2 or rows[-1][2] == rows[0][2]:
        return None, None
    busy = 100.0 * (rows[-1][1] - rows[0][1]) / (rows[-1][2] - rows[0][2])
    return busy, max(r[3] for r in rows)


def process_prefix(target):
    return {"cluster": "node-", "single": "single-", "netty": "netty-"}[target]


def peaks(samples, target, start, end):
    pk = {}
    for t, name, kib in samples:
        if start <= t <= end + 1 and name.startswith(process_prefix(target)):
            pk[name] = max(pk.get(name, 0), kib)
    return dict(sorted(pk.items()))


def variant(run):
    t = TARGET_NAMES.get(run["target"], run["target"])
    return t if run["replicas"] in ("-", "") else f"{t}, replicas {run['replicas']}"


def report(folder):
    runs = read_tsv(os.path.join(folder, "runs.tsv"))
    rss, ticks = read_rss(os.path.join(folder, "rss.tsv"))
    machine = read_machine(os.path.join(folder, "machine.tsv"))
    env = []
    if os.path.exists(os.path.join(folder, "env.txt")):
        with open(os.path.join(folder, "env.txt")) as f:
            env = [ln.rstrip("\n") for ln in f if ln.strip()]
    hz = 100
    for ln in env:
        if ln.startswith("clock ticks:") and ln.split(":")[1].strip().isdigit():
            hz = int(ln.split(":")[1])

    for run in runs:
        path = os.path.join(folder, run["summary"])
        run["ok"] = os.path.exists(path)
        if run["ok"]:
            run["r"] = summarize(load_summary(path), parse_duration(run["duration"]))
        run["rss"] = peaks(rss, run["target"], int(run["start"]), int(run["end"]))
        run["cpu"] = cpu_percent(ticks, run["target"], int(run["start"]), int(run["end"]), hz)
        # CPU time of all the target's JVMs per completed request (the run's window, in ms).
        secs = int(run["end"]) - int(run["start"])
        done = run["r"]["requests"] if run["ok"] else 0
        run["cpu_per_req"] = (sum(run["cpu"].values()) / 100.0 * secs * 1000 / done) if done and run["cpu"] else None
        run["busy"], run["load"] = machine_busy(machine, int(run["start"]), int(run["end"]))
        run["rate_n"] = float(run["rate"])
        tl = os.path.join(folder, run["csv"].replace(".csv.gz", ".timeline.csv"))
        run["timeline"] = read_timeline(tl) if os.path.exists(tl) else None

    cores = 1
    for ln in env:
        m = re.search(r"(\d+) cores", ln)
        if ln.startswith("machine:") and m:
            cores = int(m.group(1))
    charts = make_charts(folder, runs, rss, ticks, machine, hz, cores)

    out = [f"# ringkv load test, {os.path.basename(os.path.normpath(folder))}", ""]
    out += [f"- {ln}" for ln in env]
    out += ["", "Latencies in ms as k6 measured them (loopback, k6 on the same machine as the nodes). "
            "Offered: the arrival rate k6 scheduled (open model); achieved: requests completed per second "
            "of the run. Errors: requests outside the expected statuses (`http_req_failed`). "
            "Peak RSS: the highest VmRSS of each JVM during that run, sampled every second. "
            "CPU: each JVM's CPU time during the run, in % of one core; CPU ms/req: the CPU time of all "
            "the target's JVMs per completed request (includes GC and JIT threads); machine: the whole machine's CPU "
            "busy % over all cores (k6 and anything else running included) and its highest 1-minute load.", ""]

    scenarios = []
    for run in runs:
        if run["scenario"] not in scenarios:
            scenarios.append(run["scenario"])
    for scenario in scenarios:
        rs = [r for r in runs if r["scenario"] == scenario]
        out += [f"## {scenario}", ""]
        out += ["| target | offered/s | achieved/s | p50 | p90 | p99 | p99.9 | max | errors % | statuses | dropped | peak RSS MiB | CPU % | CPU ms/req | machine busy % (load) | thresholds |",
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- | --- | ---: | --- | --- |"]
        for r in rs:
            if not r["ok"]:
                out.append(f"| {variant(r)} | {r['rate']} | no summary (k6 exit {r['rc']}) |" + " |" * 14)
                continue
            x = r["r"]
            ops = "".join(f"<br>{op} p99 {fmt_ms(v)}" for op, v in x["ops"].items())
            rss_cell = " / ".join(f"{v / 1024:.0f}" for v in r["rss"].values()) or "-"
            cpu_cell = " / ".join(f"{v:.0f}" for v in r["cpu"].values()) or "-"
            busy_cell = f"{r['busy']:.0f} ({r['load']:.1f})" if r["busy"] is not None else "-"
            th = "missed: " + "; ".join(x["failed_thresholds"]) if x["failed_thresholds"] else "ok"
            out.append(f"| {variant(r)} | {r['rate']} | {x['achieved']:.1f} | {fmt_ms(x['p50'])} | {fmt_ms(x['p90'])} | "
                       f"{fmt_ms(x['p99'])}{ops} | {fmt_ms(x['p99.9'])} | {fmt_ms(x['max'])} | {x['errors']:.2f} | "
                       f"{fmt_statuses(x['statuses'])} | {x['dropped']} | {rss_cell} | {cpu_cell} | {fmt_ms(r['cpu_per_req'])} | {busy_cell} | {th} |")
        out.append("")
        out += baseline_ratios(rs)
        for name in charts.get(scenario, []):
            out += [f"![{name}](charts/{name})", ""]

    warmups = sorted(f for f in os.listdir(os.path.join(folder, "k6")) if f.endswith("_warmup.json")) \
        if os.path.isdir(os.path.join(folder, "k6")) else []
    if warmups:
        out += ["## warm-up (not part of the results)", "",
                "| target | offered/s | achieved/s | p50 | p99 | max | errors % | statuses | dropped |",
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |"]
        for f in warmups:
            s = load_summary(os.path.join(folder, "k6", f))
            x = summarize(s)
            out.append(f"| {f[:-len('_warmup.json')]} | {s.get('ringkv', {}).get('config', {}).get('rate', '?')} | "
                       f"{x['achieved']:.1f} | {fmt_ms(x['p50'])} | {fmt_ms(x['p99'])} | {fmt_ms(x['max'])} | "
                       f"{x['errors']:.2f} | {fmt_statuses(x['statuses'])} | {x['dropped']} |")
        out.append("")

    out += node_metrics(folder)

    fills = sorted(f for f in os.listdir(os.path.join(folder, "k6")) if f.endswith("_fill.json")) \
        if os.path.isdir(os.path.join(folder, "k6")) else []
    if fills:
        out += ["## fill", "", "| target | keys | seconds | keys/s | p50 | p99 | max | statuses |",
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
        for f in fills:
            s = load_summary(os.path.join(folder, "k6", f))
            secs = s["state"]["testRunDurationMs"] / 1000
            keys = metric(s, "iterations", "count", 0)
            out.append(f"| {f[:-len('_fill.json')]} | {keys} | {secs:.1f} | {keys / secs if secs else 0:.0f} | "
                       f"{fmt_ms(metric(s, 'http_req_duration', 'med'))} | {fmt_ms(metric(s, 'http_req_duration', 'p(99)'))} | "
                       f"{fmt_ms(metric(s, 'http_req_duration', 'max'))} | {fmt_statuses(status_counts(s))} |")
        out.append("")

    if rss:
        overall = {}
        for _, name, kib in rss:
            overall[name] = max(overall.get(name, 0), kib)
        out += ["## memory and CPU over the whole run", "", "| process | peak RSS MiB |", "| --- | ---: |"]
        out += [f"| {n} | {v / 1024:.0f} |" for n, v in sorted(overall.items())]
        out.append("")
        for name in charts.get("_rss", []):
            out += [f"![{name}](charts/{name})", ""]

    timings = read_tsv(os.path.join(folder, "timings.tsv"))
    if timings:
        out += ["## timings", "", "| step | seconds |", "| --- | ---: |"]
        out += [f"| {t['step']} | {t['seconds']} |" for t in timings]
        out.append("")

    if charts.get("_error"):
        out += [f"_No charts: {charts['_error']}_", ""]

    with open(os.path.join(folder, "report.md"), "w") as f:
        f.write("\n".join(out))


def node_metrics(folder):
    """The nodes' own counters after each step (run.sh scrapes /actuator/prometheus)."""
    mdir = os.path.join(folder, "metrics")
    if not os.path.isdir(mdir):
        return []
    files = sorted((f for f in os.listdir(mdir) if f.endswith(".prom")),
                   key=lambda f: (os.path.getmtime(os.path.join(mdir, f)), f))
    rows = []
    for f in files:
        n = failed = rejected = open_breakers = 0
        with open(os.path.join(mdir, f)) as fh:
            for ln in fh:
                if ln.startswith("#"):
                    continue
                try:
                    v = float(ln.rsplit(" ", 1)[1])
                except (IndexError, ValueError):
                    continue
                if ln.startswith("ringkv_client_not_enough_replicas_total"):
                    n += v
                elif ln.startswith("ringkv_replica_calls_seconds_count") and 'outcome="failure"' in ln:
                    failed += v
                elif ln.startswith("ringkv_replica_calls_seconds_count") and 'outcome="rejected"' in ln:
                    rejected += v
                elif ln.startswith("ringkv_replica_breaker_state") and v > 0:
                    open_breakers += 1
        step, _, port = f[:-len(".prom")].rpartition("-")
        rows.append(f"| {step} | {port} | {n:.0f} | {failed:.0f} | {rejected:.0f} | {open_breakers} |")
    if not rows:
        return []
    return ["## the nodes' counters after each step", "",
            "Cumulative since the node started, from its `/actuator/prometheus`: answers `504` (not enough "
            "replicas), replica calls that failed, replica calls an open circuit breaker rejected, and "
            "breakers not closed at that moment.", "",
            "| after | node | 504s | replica calls failed | rejected by a breaker | breakers not closed |",
            "| --- | --- | ---: | ---: | ---: | ---: |"] + rows + [""]


def baseline_ratios(rs):
    """Each cluster run against the baselines at the same offered rate: how much slower."""
    base = {}
    for r in rs:
        if r["ok"] and r["target"] in ("single", "netty"):
            base[(r["target"], r["rate"])] = dict(r["r"], cpu_per_req=r.get("cpu_per_req"))
    if not base:
        return []
    out = ["Against the baselines at the same offered rate (cluster ÷ baseline; above 1 is slower):", "",
           "| cluster run | offered/s | p50 × single | p99 × single | p50 × netty | p99 × netty | achieved × single | achieved × netty | CPU/req × single | CPU/req × netty |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]

    def ratio(a, b):
        if a is None or b is None or not b or math.isnan(a) or math.isnan(b):
            return "-"
        return f"{a / b:.2f}"

    for r in rs:
        if not r["ok"] or r["target"] != "cluster":
            continue
        s, n = base.get(("single", r["rate"])), base.get(("netty", r["rate"]))
        x = r["r"]
        cells = []
        for b in (s, n):
            cells += [ratio(x["p50"], b["p50"]) if b else "-", ratio(x["p99"], b["p99"]) if b else "-"]
        cells += [ratio(x["achieved"], s["achieved"]) if s else "-", ratio(x["achieved"], n["achieved"]) if n else "-"]
        cells += [ratio(r.get("cpu_per_req"), b["cpu_per_req"]) if b else "-" for b in (s, n)]
        out.append(f"| {variant(r)} | {r['rate']} | " + " | ".join(cells) + " |")
    out.append("")
    return out


# ---- charts -----------------------------------------------------------------------------------------

def make_charts(folder, runs, rss, ticks=(), machine=(), hz=100, cores=1):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return {"_error": f"matplotlib is missing ({e})"}
    from matplotlib.ticker import FuncFormatter

    plain = FuncFormatter(lambda v, _: f"{v:g}")  # 0.5, 20, 3000 rather than 3x10^3 on log axes
    cdir = os.path.join(folder, "charts")
    os.makedirs(cdir, exist_ok=True)
    for old in os.listdir(cdir):
        if old.endswith(".png"):
            os.remove(os.path.join(cdir, old))
    made = defaultdict(list)

    scenarios = []
    for run in runs:
        if run["scenario"] not in scenarios:
            scenarios.append(run["scenario"])

    for scenario in scenarios:
        rs = [r for r in runs if r["scenario"] == scenario and r["ok"]]
        if not rs:
            continue
        # Latency percentiles against the offered rate, one line per target/replicas.
        fig, axes = plt.subplots(2, 2, figsize=(11, 7.5), sharex=True)
        variants = []
        for r in rs:
            if variant(r) not in variants:
                variants.append(variant(r))
        for ax, (label, _) in zip(axes.flat, PCTS[:4]):
            for v in variants:
                pts = sorted((r["rate_n"], r["r"][label]) for r in rs if variant(r) == v)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=v)
            ax.set_title(f"{label} latency")
            ax.set_ylabel("ms")
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(plain)
            ax.grid(True, which="both", alpha=0.3)
        rates = sorted({r["rate_n"] for r in rs})
        for ax in axes.flat:
            ax.set_xticks(rates)
            ax.set_xticklabels([f"{x:g}" for x in rates])
        for ax in axes[1]:
            ax.set_xlabel("offered rate (requests/s)")
        axes[0][0].legend(fontsize=8)
        fig.suptitle(f"ringkv {scenario}: latency vs offered rate")
        fig.tight_layout()
        name = f"latency-vs-rate-{scenario}.png"
        fig.savefig(os.path.join(cdir, name), dpi=90)
        plt.close(fig)
        made[scenario].append(name)

        # Latency over time, one figure per target/replicas with a row per offered rate.
        for v in variants:
            vr = sorted((r for r in rs if variant(r) == v and r["timeline"]), key=lambda r: r["rate_n"])
            if not vr:
                continue
            fig, axes = plt.subplots(len(vr), 1, figsize=(11, 2.8 * len(vr) + 0.6), squeeze=False)
            for ax, r in zip(axes[:, 0], vr):
                tl = r["timeline"]
                t = [row["second"] for row in tl]
                for key, style in (("p50", "-"), ("p99", "-"), ("max", ":")):
                    ax.plot(t, [row[key] for row in tl], style, label=key)
                ax.set_yscale("log")
                ax.yaxis.set_major_formatter(plain)
                ax.set_ylabel("ms")
                ax.grid(True, which="both", alpha=0.3)
                ax2 = ax.twinx()
                ax2.plot(t, [row["requests"] for row in tl], color="grey", alpha=0.5, label="requests/s")
                if any(row["failed"] for row in tl):
                    ax2.bar(t, [row["failed"] for row in tl], color="red", alpha=0.6, label="failed/s")
                ax2.set_ylabel("per second")
                ax2.set_ylim(bottom=0)
                ax.set_title(f"offered {r['rate']}/s", fontsize=10)
                h1, l1 = ax.get_legend_handles_labels()
                h2, l2 = ax2.get_legend_handles_labels()
                ax.legend(h1 + h2, l1 + l2, fontsize=7, loc="upper left")
            axes[-1, 0].set_xlabel("seconds into the run")
            fig.suptitle(f"ringkv {scenario}, {v}: latency per second")
            fig.tight_layout()
            slug = re.sub(r"[^a-z0-9]+", "-", f"{scenario} {v}".lower()).strip("-")
            name = f"over-time-{slug}.png"
            fig.savefig(os.path.join(cdir, name), dpi=90)
            plt.close(fig)
            made[scenario].append(name)

    if rss:
        t0 = min(t for t, _, _ in rss)
        series = defaultdict(list)
        for t, name, kib in rss:
            series[name].append((t - t0, kib / 1024))
        fig, (ax, axc) = plt.subplots(2, 1, figsize=(11, 7), sharex=True)
        for name, pts in sorted(series.items()):
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=name)
        cpu = defaultdict(list)
        prev = {}
        for t, name, v in ticks:
            if name in prev and t > prev[name][0]:
                cpu[name].append((t - t0, 100.0 * (v - prev[name][1]) / hz / (t - prev[name][0])))
            prev[name] = (t, v)
        for name, pts in sorted(cpu.items()):
            axc.plot([p[0] for p in pts], [p[1] for p in pts], label=name, linewidth=0.9)
        mpts = []
        for a, b in zip(machine, machine[1:]):
            if b[2] > a[2] and b[0] >= t0:
                mpts.append((b[0] - t0, 100.0 * cores * (b[1] - a[1]) / (b[2] - a[2])))
        if mpts:
            axc.plot([p[0] for p in mpts], [p[1] for p in mpts], color="black", linestyle="--",
                     linewidth=0.9, label=f"whole machine ({cores} cores)")
        for a in (ax, axc):
            for r in runs:
                a.axvspan(int(r["start"]) - t0, int(r["end"]) - t0, color="grey", alpha=0.08)
            a.grid(True, alpha=0.3)
            a.legend(fontsize=7, loc="upper left")
        ax.set_ylabel("RSS MiB")
        ax.set_title("resident memory of each JVM")
        axc.set_ylabel("CPU, % of one core")
        axc.set_title("CPU of each JVM and of the whole machine")
        axc.set_xlabel("seconds into the benchmark (shaded: measured k6 runs)")
        fig.tight_layout()
        fig.savefig(os.path.join(cdir, "memory-cpu.png"), dpi=90)
        plt.close(fig)
        made["_rss"].append("memory-cpu.png")
    return made


def main(argv):
    if len(argv) == 3 and argv[0] == "--timeline":
        timeline(argv[1], argv[2])
    elif len(argv) == 2 and argv[0] == "--line":
        print(line(argv[1]))
    elif len(argv) == 1 and not argv[0].startswith("-"):
        report(argv[0])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
