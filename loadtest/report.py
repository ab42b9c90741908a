#!/usr/bin/env python3
"""Turns a loadtest/run.sh results folder into report.md and PNG charts.

    python3 loadtest/report.py loadtest/results/<timestamp>      report.md + charts/*.png
    python3 loadtest/report.py --timeline k6.csv.gz out.csv      per-second buckets of a k6 CSV
    python3 loadtest/report.py --line summary.json               one line about a k6 summary
    python3 loadtest/report.py --wrk-line out1.txt out2.txt ...  one line about a wrk run

The folder holds what run.sh wrote: env.txt, runs.tsv (one line per k6 or wrk run), k6/<run>.json
(handleSummary's JSON), k6/<run>.timeline.csv (per-second latency buckets, made from k6's
--out csv; the cold start's raw CSV k6/<run>.csv.gz is kept), wrk/<run>-<n>.txt (each wrk
process's output, with its WRK_SUMMARY line), startup.tsv (each ringkv node's time to ready),
profiles/<run>/<process>-{cpu,alloc,lock}.html (PROFILE=1), rss.tsv (epoch, process, pid, VmRSS
KiB, CPU ticks, every second), machine.tsv (epoch, busy and total CPU jiffies, 1-minute load)
and timings.tsv.
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
TARGET_NAMES = {"cluster": "cluster (3 nodes)", "cluster-sync": "cluster, fsync per write (3 nodes)",
                "single": "single node", "netty": "bare Netty",
                "webflux": "bare WebFlux", "etcd": "etcd (3 members)"}
# The names run.sh gives each target's processes (procs.tsv, rss.tsv).
PROCESS_PREFIX = {"cluster": "node-", "cluster-sync": "sync-", "single": "single-", "netty": "netty-",
                  "webflux": "webflux-", "etcd": "etcd-"}
# Runs that are not one point of a scenario's rate sweep: the closed-loop wrk run, the cold start.
WRK_SCENARIO, COLD_PREFIX = "wrk-mixed", "cold-"
COLD_WINDOW_S = 15


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


# ---- wrk ------------------------------------------------------------------------------------------

def load_wrk(folder, files):
    """Each wrk process's output: its URL (run.sh's first line) and its WRK_SUMMARY JSON."""
    procs = []
    for rel in files:
        path = os.path.join(folder, rel)
        url, data = None, None
        if os.path.exists(path):
            with open(path, errors="replace") as f:
                for ln in f:
                    if ln.startswith("# url: "):
                        url = ln[len("# url: "):].strip()
                    elif ln.startswith("WRK_SUMMARY "):
                        try:
                            data = json.loads(ln[len("WRK_SUMMARY "):])
                        except ValueError:
                            pass
        procs.append({"file": rel, "url": url, "s": data})
    return procs


def summarize_wrk(procs):
    """The three processes together: rates and counts add up; wrk merges no histograms, so the
    percentiles are the worst (highest) of the processes'."""
    ok = [p["s"] for p in procs if p["s"]]
    if not ok:
        return None
    kinds = defaultdict(int)
    for x in ok:
        for k, v in x.get("errors", {}).items():
            kinds[k] += v
    reqs = sum(x["requests"] for x in ok)
    out = {
        "requests": reqs,
        "achieved": sum(x["rate"] for x in ok),
        "errors_n": sum(kinds.values()),
        "error_kinds": {k: v for k, v in kinds.items() if v},
        "missing": len(procs) - len(ok),
        "processes": len(procs),
    }
    out["errors"] = 100.0 * out["errors_n"] / reqs if reqs else float("nan")
    for label in ("p50", "p90", "p99", "p99.9", "max"):
        out[label] = max(x["latency_ms"].get(label, float("nan")) for x in ok)
    return out


def wrk_line(files):
    procs = load_wrk(".", files)
    x = summarize_wrk(procs)
    if not x:
        return "wrk: no WRK_SUMMARY in " + " ".join(files)
    each = " + ".join(f"{p['s']['rate']:.0f}" if p["s"] else "?" for p in procs)
    return (f"wrk mixed: {x['achieved']:.1f}/s ({each}), worst of {len(procs)}: p50 {fmt_ms(x['p50'])} "
            f"p99 {fmt_ms(x['p99'])} max {fmt_ms(x['max'])} ms, errors {x['errors_n']}"
            + (f" ({', '.join(f'{k} {v}' for k, v in x['error_kinds'].items())})" if x["error_kinds"] else "")
            + (f", {x['missing']} process(es) without a summary" if x["missing"] else ""))


# ---- the cold start -------------------------------------------------------------------------------

def csv_windows(csv_path, duration_s, width=COLD_WINDOW_S):
    """Requests, failures, statuses and percentiles per window of `width` seconds of a k6 CSV
    (--out csv), counted from its first request; samples past the run's end go to the last one."""
    opener = gzip.open if csv_path.endswith(".gz") else open
    rows = []
    with opener(csv_path, "rt", newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        col = {name: i for i, name in enumerate(header)}
        i_name, i_time, i_value = col["metric_name"], col["timestamp"], col["metric_value"]
        i_expected, i_status = col.get("expected_response"), col.get("status")
        for row in reader:
            if row[i_name] != "http_req_duration":
                continue
            ts = int(row[i_time])
            ms = ts if ts > 10**11 else ts * 1000
            rows.append((ms, float(row[i_value]),
                         i_expected is not None and row[i_expected] == "false",
                         row[i_status] if i_status is not None else ""))
    if not rows:
        return []
    first = min(r[0] for r in rows)
    n = max(1, int(math.ceil(duration_s / width))) if duration_s else None
    wins = defaultdict(lambda: {"values": [], "failed": 0, "statuses": defaultdict(int)})
    for ms, v, failed, status in rows:
        i = int((ms - first) // (width * 1000))
        if n is not None:
            i = min(i, n - 1)
        w = wins[i]
        w["values"].append(v)
        w["failed"] += failed
        w["statuses"][int(status) if status.isdigit() else 0] += 1
    out = []
    for i in sorted(wins):
        w = wins[i]
        vals = sorted(w["values"])
        end = (i + 1) * width if n is None else (duration_s if i == n - 1 else min((i + 1) * width, duration_s))
        out.append({"from": i * width, "to": end, "requests": len(vals),
                    "errors": 100.0 * w["failed"] / len(vals), "statuses": dict(sorted(w["statuses"].items())),
                    "p50": percentile(vals, 50), "p99": percentile(vals, 99), "max": vals[-1]})
    return out


def timeline_windows(rows, width=COLD_WINDOW_S):
    """The same from the per-second timeline when the raw CSV is gone: requests and failures are
    exact, the p99 is the highest of the seconds' p99s (an upper bound), no statuses."""
    wins = defaultdict(list)
    for r in rows:
        wins[int(r["second"] // width)].append(r)
    out = []
    for i in sorted(wins):
        rs = [r for r in wins[i] if r["requests"]]
        reqs = sum(r["requests"] for r in wins[i])
        out.append({"from": i * width, "to": (i + 1) * width, "requests": int(reqs),
                    "errors": 100.0 * sum(r["failed"] for r in wins[i]) / reqs if reqs else float("nan"),
                    "statuses": {}, "p50": float("nan"),
                    "p99": max((r["p99"] for r in rs), default=float("nan")),
                    "max": max((r["max"] for r in rs), default=float("nan")), "approx": True})
    return out


def cold_section(folder, runs):
    startup = read_tsv(os.path.join(folder, "startup.tsv"))
    colds = [r for r in runs if r["kind"] == "cold"]
    if not startup and not colds:
        return []
    out = ["## cold start", ""]
    if startup:
        out += ["Each ringkv node's time from its JVM's start (the launch by run.sh) to "
                "`GET /actuator/health/readiness` answering 200 and to `/v0/status` answering, polled every 100 ms.", "",
                "| target | node | ready s | /v0/status s |", "| --- | --- | ---: | ---: |"]
        for row in startup:
            def secs(v):
                return f"{int(v) / 1000:.1f}" if v and v.isdigit() else "-"
            out.append(f"| {TARGET_NAMES.get(row['target'], row['target'])} | {row['process']} | "
                       f"{secs(row['ready_ms'])} | {secs(row['status_ms'])} |")
        out.append("")
    for r in colds:
        out += [f"### {variant(r)}: mixed at {r['rate']}/s on the empty store from readiness on, {r['duration']}", ""]
        if not r["ok"]:
            out += [f"No summary (k6 exit {r['rc']}).", ""]
            continue
        x = r["r"]
        raw = os.path.join(folder, r["csv"])
        wins = []
        if os.path.exists(raw):
            wins = csv_windows(raw, parse_duration(r["duration"]))
        elif r["timeline"]:
            wins = timeline_windows(r["timeline"])
        out += ["| window | requests | errors % | statuses | p50 | p99 | max |",
                "| --- | ---: | ---: | --- | ---: | ---: | ---: |"]
        for w in wins:
            mark = " (max of per-second p99s)" if w.get("approx") else ""
            out.append(f"| {w['from']:g}–{w['to']:g} s | {w['requests']} | {w['errors']:.2f} | "
                       f"{fmt_statuses(w['statuses'])} | {fmt_ms(w['p50'])} | {fmt_ms(w['p99'])}{mark} | {fmt_ms(w['max'])} |")
        out.append(f"| whole run | {x['requests']} | {x['errors']:.2f} | {fmt_statuses(x['statuses'])} | "
                   f"{fmt_ms(x['p50'])} | {fmt_ms(x['p99'])} | {fmt_ms(x['max'])} |")
        cpu_cell = " / ".join(f"{v:.0f}" for v in r["cpu"].values()) or "-"
        out += ["", f"Achieved {x['achieved']:.1f}/s, dropped {x['dropped']}, CPU % {cpu_cell}, "
                f"CPU ms/req {fmt_ms(r['cpu_per_req'])}. Windows from k6's raw per-request CSV, counted from "
                f"its first request; GETs of keys not written yet answer 404, which is not an error here.", ""]
    return out


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
    return PROCESS_PREFIX.get(target, target + "-")


def run_kind(run):
    if run["scenario"] == WRK_SCENARIO:
        return "wrk"
    if run["scenario"].startswith(COLD_PREFIX):
        return "cold"
    return "k6"


def to_float(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return float("nan")


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

    cores = 1
    for ln in env:
        m = re.search(r"(\d+) cores", ln)
        if ln.startswith("machine:") and m:
            cores = int(m.group(1))
    for run in runs:
        run["kind"] = run_kind(run)
        run["p99_limit"] = None
        if run["kind"] == "wrk":
            run["procs"] = load_wrk(folder, run["summary"].split(","))
            run["r"] = summarize_wrk(run["procs"])
            run["ok"] = run["r"] is not None
        else:
            path = os.path.join(folder, run["summary"])
            run["ok"] = os.path.exists(path)
            if run["ok"]:
                s = load_summary(path)
                run["r"] = summarize(s, parse_duration(run["duration"]))
                run["p99_limit"] = s.get("ringkv", {}).get("config", {}).get("p99Ms")
        run["rss"] = peaks(rss, run["target"], int(run["start"]), int(run["end"]))
        run["cpu"] = cpu_percent(ticks, run["target"], int(run["start"]), int(run["end"]), hz)
        # CPU time of all the target's JVMs per completed request (the run's window, in ms).
        secs = int(run["end"]) - int(run["start"])
        done = run["r"]["requests"] if run["ok"] else 0
        run["cpu_per_req"] = (sum(run["cpu"].values()) / 100.0 * secs * 1000 / done) if done and run["cpu"] else None
        run["busy"], run["load"] = machine_busy(machine, int(run["start"]), int(run["end"]))
        # The rest of the machine's CPU per request: the load generator above all. Where it is as
        # large as the target's, the achieved rate is the client's limit as much as the server's.
        run["rest_per_req"] = (run["busy"] / 100.0 * cores * secs * 1000 / done - run["cpu_per_req"]) \
            if done and run["busy"] is not None and run["cpu_per_req"] is not None else None
        run["rate_n"] = to_float(run["rate"])
        tl = os.path.join(folder, run["csv"].replace(".csv.gz", ".timeline.csv"))
        run["timeline"] = read_timeline(tl) if run["csv"] not in ("", "-") and os.path.exists(tl) else None

    k6_runs = [r for r in runs if r["kind"] == "k6"]
    charts = make_charts(folder, runs, rss, ticks, machine, hz, cores)

    out = [f"# ringkv load test, {os.path.basename(os.path.normpath(folder))}", ""]
    out += [f"- {ln}" for ln in env]
    out += ["", "Latencies in ms as k6 measured them (loopback, k6 on the same machine as the nodes). "
            "Offered: the arrival rate k6 scheduled (open model); achieved: requests completed per second "
            "of the run. Errors: requests outside the expected statuses (`http_req_failed`). "
            "Peak RSS: the highest VmRSS of each JVM during that run, sampled every second. "
            "CPU: each JVM's CPU time during the run, in % of one core; CPU ms/req: the CPU time of all "
            "the target's JVMs per completed request (includes GC and JIT threads); rest ms/req: the rest of the "
            "machine's CPU time per completed request, k6 above all (where it is as large as the target's, the "
            "achieved rate is the shared cores' limit, not the target's alone); machine: the whole machine's CPU "
            "busy % over all cores (k6 and anything else running included) and its highest 1-minute load.", ""]

    scenarios = []
    for run in k6_runs:
        if run["scenario"] not in scenarios:
            scenarios.append(run["scenario"])
    for scenario in scenarios:
        rs = [r for r in k6_runs if r["scenario"] == scenario]
        out += [f"## {scenario}", ""]
        out += ["| target | offered/s | achieved/s | p50 | p90 | p99 | p99.9 | max | errors % | statuses | dropped | peak RSS MiB | CPU % | CPU ms/req | rest ms/req | machine busy % (load) | thresholds |",
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- | --- | ---: | ---: | --- | --- |"]
        for r in rs:
            if not r["ok"]:
                out.append(f"| {variant(r)} | {r['rate']} | no summary (k6 exit {r['rc']}) |" + " |" * 15)
                continue
            x = r["r"]
            ops = "".join(f"<br>{op} p99 {fmt_ms(v)}" for op, v in x["ops"].items())
            rss_cell = " / ".join(f"{v / 1024:.0f}" for v in r["rss"].values()) or "-"
            cpu_cell = " / ".join(f"{v:.0f}" for v in r["cpu"].values()) or "-"
            busy_cell = f"{r['busy']:.0f} ({r['load']:.1f})" if r["busy"] is not None else "-"
            th = "missed: " + "; ".join(x["failed_thresholds"]) if x["failed_thresholds"] else "ok"
            out.append(f"| {variant(r)} | {r['rate']} | {x['achieved']:.1f} | {fmt_ms(x['p50'])} | {fmt_ms(x['p90'])} | "
                       f"{fmt_ms(x['p99'])}{ops} | {fmt_ms(x['p99.9'])} | {fmt_ms(x['max'])} | {x['errors']:.2f} | "
                       f"{fmt_statuses(x['statuses'])} | {x['dropped']} | {rss_cell} | {cpu_cell} | {fmt_ms(r['cpu_per_req'])} | {fmt_ms(r['rest_per_req'])} | {busy_cell} | {th} |")
        out.append("")
        out += capacity_lines(rs)
        out += baseline_ratios(rs)
        for name in charts.get(scenario, []):
            out += [f"![{name}](charts/{name})", ""]

    out += wrk_section(runs)
    out += cold_section(folder, runs)
    for name in charts.get("_cold", []):
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

    out += profiles_section(folder, runs, env)

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


def ratio(a, b):
    if a is None or b is None or not b or math.isnan(a) or math.isnan(b):
        return "-"
    return f"{a / b:.2f}"


BASELINES = ("single", "netty", "webflux", "etcd")


def baseline_ratios(rs):
    """Each cluster run (and the single node's) against the baselines at the same offered rate:
    how much slower or costlier. Runs at different rates are never compared."""
    base = {}
    for r in rs:
        if r["ok"] and r["target"] in BASELINES:
            base[(r["target"], r["rate"])] = dict(r["r"], cpu_per_req=r.get("cpu_per_req"))
    present = [b for b in BASELINES if any(k[0] == b for k in base)]
    head = []
    for b in present:
        head += [f"p50 × {b}", f"p99 × {b}", f"achieved × {b}", f"CPU/req × {b}"]
    rows = []
    for r in rs:
        if not r["ok"] or r["target"] not in ("cluster", "cluster-sync", "single"):
            continue
        x = r["r"]
        cells = []
        for b in present:
            y = base.get((b, r["rate"])) if b != r["target"] else None
            if not y:
                cells += ["-"] * 4
                continue
            cells += [ratio(x["p50"], y["p50"]), ratio(x["p99"], y["p99"]),
                      ratio(x["achieved"], y["achieved"]), ratio(r.get("cpu_per_req"), y["cpu_per_req"])]
        if all(c == "-" for c in cells):
            continue
        rows.append((r, cells))
    if not rows:
        return []
    # Only the baselines some row is compared with (the single node's own column stays out).
    keep = [i for i in range(len(head))
            if any(c != "-" for _, cells in rows for c in cells[i // 4 * 4:i // 4 * 4 + 4])]
    head = [head[i] for i in keep]
    lines = [f"| {variant(r)} | {r['rate']} | " + " | ".join(cells[i] for i in keep) + " |" for r, cells in rows]
    return ["Against the baselines at the same offered rate (run ÷ baseline; above 1 is slower, or costlier "
            "per request; `-`: that baseline did not run at this rate):", "",
            "| run | offered/s | " + " | ".join(head) + " |",
            "| --- | ---: |" + " ---: |" * len(head)] + lines + [""]


def held(r):
    """The offered rate was held: every request answered as expected, none dropped, the rate
    achieved (within 5 %), and p99 within the run's own P99_MS threshold."""
    x = r["r"]
    limit = r["p99_limit"] if r["p99_limit"] is not None else 10
    return (x["errors"] == 0 and x["dropped"] == 0 and not math.isnan(x["p99"]) and x["p99"] <= limit
            and x["achieved"] >= 0.95 * r["rate_n"])


def capacity_lines(rs):
    """Per target (and replicas): the highest offered rate held with p99 ≤ P99_MS and no errors."""
    variants = []
    for r in rs:
        if variant(r) not in variants:
            variants.append(variant(r))
    limits = sorted({r["p99_limit"] for r in rs if r["ok"] and r["p99_limit"] is not None})
    limit = "/".join(f"{v:g}" for v in limits) or "10"
    out = [f"Highest offered rate held with p99 ≤ {limit} ms (P99_MS) and no errors (nor dropped iterations, "
           f"and at least 95 % of the offered rate achieved):", ""]
    for v in variants:
        vr = sorted((r for r in rs if variant(r) == v and r["ok"]), key=lambda r: r["rate_n"])
        ok = [r for r in vr if held(r)]
        if not vr:
            continue
        if not ok:
            out.append(f"- {v}: none of {', '.join(r['rate'] for r in vr)}/s")
            continue
        best = ok[-1]
        missed = [r["rate"] for r in vr if r["rate_n"] < best["rate_n"] and not held(r)]
        above = [r["rate"] for r in vr if r["rate_n"] > best["rate_n"]]
        out.append(f"- {v}: **{best['rate']}/s** (p99 {fmt_ms(best['r']['p99'])} ms)"
                   + (f"; not held at {', '.join(above)}/s" if above else "; the highest rate tried")
                   + (f"; yet missed at the lower {', '.join(missed)}/s" if missed else ""))
    out.append("")
    return out


def wrk_section(runs):
    wr = [r for r in runs if r["kind"] == "wrk"]
    if not wr:
        return []
    procs = max(len(r["procs"]) for r in wr)
    out = ["## wrk: mixed, closed loop", "",
           f"{procs} wrk processes at once, each one thread (`-t1`) with its connections, one per node "
           "(for one server, all to it); each connection sends its next request as soon as the last one "
           "answered, so the rate is what the target completes at that concurrency. req/s: the sum over the "
           "processes. p50, p99, max: the **worst (highest) of the processes'** (wrk merges no histograms). "
           "Errors: socket errors (connect, read, write, timeout) plus answers that were not 2xx/3xx. CPU ms/req: "
           "the CPU time of all the target's processes over the run per completed request, as for the k6 runs.", ""]
    for r in wr:
        out += [f"### {variant(r)}, {r['duration']}", "",
                "| process | URL | req/s | p50 | p90 | p99 | p99.9 | max | errors |",
                "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
        for i, p in enumerate(r["procs"], 1):
            x = p["s"]
            if not x:
                out.append(f"| {i} | {p['url'] or '?'} | no WRK_SUMMARY in `{p['file']}` |" + " |" * 6)
                continue
            lat = x["latency_ms"]
            errs = ", ".join(f"{k} {v}" for k, v in x["errors"].items() if v) or "0"
            out.append(f"| {i} | {p['url'] or '?'} | {x['rate']:.1f} | {fmt_ms(lat.get('p50'))} | {fmt_ms(lat.get('p90'))} | "
                       f"{fmt_ms(lat.get('p99'))} | {fmt_ms(lat.get('p99.9'))} | {fmt_ms(lat.get('max'))} | {errs} |")
        if r["ok"]:
            x = r["r"]
            errs = ", ".join(f"{k} {v}" for k, v in x["error_kinds"].items()) or "0"
            out.append(f"| **all** | | **{x['achieved']:.1f}** | {fmt_ms(x['p50'])} (worst) | {fmt_ms(x['p90'])} (worst) | "
                       f"**{fmt_ms(x['p99'])}** (worst) | {fmt_ms(x['p99.9'])} (worst) | {fmt_ms(x['max'])} | {errs} |")
        out.append("")
    out += ["### wrk: the targets side by side", "",
            "| target | req/s | p50 (worst of 3) | p99 (worst of 3) | errors | errors % | peak RSS MiB | CPU % | CPU ms/req | machine busy % (load) |",
            "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | --- |"]
    for r in wr:
        if not r["ok"]:
            out.append(f"| {variant(r)} | no summary (wrk exit {r['rc']}) |" + " |" * 8)
            continue
        x = r["r"]
        rss_cell = " / ".join(f"{v / 1024:.0f}" for v in r["rss"].values()) or "-"
        cpu_cell = " / ".join(f"{v:.0f}" for v in r["cpu"].values()) or "-"
        busy_cell = f"{r['busy']:.0f} ({r['load']:.1f})" if r["busy"] is not None else "-"
        out.append(f"| {variant(r)} | {x['achieved']:.1f} | {fmt_ms(x['p50'])} | {fmt_ms(x['p99'])} | {x['errors_n']} | "
                   f"{x['errors']:.2f} | {rss_cell} | {cpu_cell} | {fmt_ms(r['cpu_per_req'])} | {busy_cell} |")
    out.append("")
    by_target = {r["target"]: r for r in wr if r["ok"]}
    pairs = [("cluster", "single"), ("single", "netty"), ("single", "webflux"), ("webflux", "netty"), ("cluster", "etcd"), ("cluster-sync", "etcd"),
             ("cluster-sync", "cluster")]
    rows = []
    for a, b in pairs:
        if a in by_target and b in by_target:
            x, y = by_target[a], by_target[b]
            rows.append(f"| {a} ÷ {b} | {ratio(x['r']['achieved'], y['r']['achieved'])} | "
                        f"{ratio(x['r']['p50'], y['r']['p50'])} | {ratio(x['r']['p99'], y['r']['p99'])} | "
                        f"{ratio(x['cpu_per_req'], y['cpu_per_req'])} |")
    if rows:
        out += ["Ratios at the same concurrency (req/s: below 1 is fewer; latency and CPU per request: above 1 "
                "is slower or costlier):", "",
                "| ratio | req/s | p50 | p99 | CPU ms/req |", "| --- | ---: | ---: | ---: | ---: |"] + rows + [""]
    return out


def profiles_section(folder, runs, env):
    pdir = os.path.join(folder, "profiles")
    if not os.path.isdir(pdir):
        return []
    order = []
    for r in runs:
        if r["kind"] == "wrk":
            label = os.path.basename(r["summary"].split(",")[0]).rsplit("-", 1)[0]
        else:
            label = os.path.basename(r["summary"])[:-len(".json")]
        order.append(label)
    labels = [d for d in os.listdir(pdir) if os.path.isdir(os.path.join(pdir, d))]
    labels.sort(key=lambda d: (order.index(d) if d in order else len(order), d))
    rows = []
    for label in labels:
        htmls = sorted(f for f in os.listdir(os.path.join(pdir, label)) if f.endswith(".html"))
        procs = []
        for f in htmls:
            name, _, kind = f[:-len(".html")].rpartition("-")
            if name not in procs:
                procs.append(name)
        for name in procs:
            cells = []
            for kind in ("cpu", "alloc", "lock"):
                f = f"{name}-{kind}.html"
                cells.append(f"[{kind}](profiles/{label}/{f})" if f in htmls else "-")
            rows.append(f"| {label} | {name} | " + " | ".join(cells) + " |")
    if not rows:
        return []
    engine = [ln for ln in env if ln.startswith("profiler:")]
    return ["## profiles", "",
            "Flame graphs of each JVM of the target during each measured run (" +
            (engine[0][len("profiler: "):] if engine else "async-profiler: see env.txt") + "). Profiling "
            "costs CPU: compare the figures of a PROFILE=1 run only with those of another PROFILE=1 run.", "",
            "| run | process | CPU | allocation | lock |", "| --- | --- | --- | --- | --- |"] + rows + [""]


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

    k6_runs = [r for r in runs if r.get("kind", "k6") == "k6"]
    scenarios = []
    for run in k6_runs:
        if run["scenario"] not in scenarios:
            scenarios.append(run["scenario"])

    for scenario in scenarios:
        rs = [r for r in k6_runs if r["scenario"] == scenario and r["ok"]]
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
        fig.suptitle(f"{scenario}: latency vs offered rate")
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
            slug = re.sub(r"[^a-z0-9]+", "-", f"{scenario} {v}".lower()).strip("-")
            name = f"over-time-{slug}.png"
            over_time_figure(plt, plain, vr, f"{scenario}, {v}: latency per second",
                             os.path.join(cdir, name))
            made[scenario].append(name)

    # The cold starts: one figure per cluster target.
    for r in runs:
        if r.get("kind") == "cold" and r["ok"] and r["timeline"]:
            name = f"cold-start-{r['target']}.png"
            over_time_figure(plt, plain, [r], f"{variant(r)}: cold start, mixed at {r['rate']}/s from readiness on",
                             os.path.join(cdir, name))
            made["_cold"].append(name)

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
        ax.set_title("resident memory of each process")
        axc.set_ylabel("CPU, % of one core")
        axc.set_title("CPU of each process and of the whole machine")
        axc.set_xlabel("seconds into the benchmark (shaded: measured k6 and wrk runs)")
        fig.tight_layout()
        fig.savefig(os.path.join(cdir, "memory-cpu.png"), dpi=90)
        plt.close(fig)
        made["_rss"].append("memory-cpu.png")
    return made


def over_time_figure(plt, plain, vr, title, path):
    """Per-second p50/p99/max, requests and failures per second: a row per run."""
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
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv):
    if len(argv) == 3 and argv[0] == "--timeline":
        timeline(argv[1], argv[2])
    elif len(argv) == 2 and argv[0] == "--line":
        print(line(argv[1]))
    elif len(argv) >= 2 and argv[0] == "--wrk-line":
        print(wrk_line(argv[1:]))
    elif len(argv) == 1 and not argv[0].startswith("-"):
        report(argv[0])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
