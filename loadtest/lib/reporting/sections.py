"""The report's sections beside the rate sweeps and wrk: the cold start, the warm-ups, the nodes'
counters, the fills, memory, timings and flame graphs."""
import os

from . import k6
from .folder import read_tsv
from .k6 import fmt_ms, fmt_statuses
from .runs import TARGET_NAMES, variant
from .samples import cpu_cell
from .timeline import csv_windows, timeline_windows


def _seconds(ms):
    return f"{int(ms) / 1000:.1f}" if ms and ms.isdigit() else "-"


def startup_lines(startup):
    out = ["Each ringkv node's time from its JVM's start (the launch by run.sh) to "
           "`GET /actuator/health/readiness` answering 200 and to `/v0/status` answering, polled every 100 ms.", "",
           "| target | node | ready s | /v0/status s |", "| --- | --- | ---: | ---: |"]
    for row in startup:
        out.append(f"| {TARGET_NAMES.get(row['target'], row['target'])} | {row['process']} | "
                   f"{_seconds(row['ready_ms'])} | {_seconds(row['status_ms'])} |")
    return out + [""]


def cold_run_lines(folder, r):
    out = [f"### {variant(r)}: mixed at {r['rate']}/s on the empty store from readiness on, {r['duration']}", ""]
    if not r["ok"]:
        return out + [f"No summary (k6 exit {r['rc']}).", ""]
    x = r["r"]
    raw = os.path.join(folder, r["csv"])
    wins = []
    if os.path.exists(raw):
        wins = csv_windows(raw, k6.parse_duration(r["duration"]))
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
    return out + ["", f"Achieved {x['achieved']:.1f}/s, dropped {x['dropped']}, CPU % {cpu_cell(r)}, "
                  f"CPU ms/req {fmt_ms(r['cpu_per_req'])}. Windows from k6's raw per-request CSV, counted from "
                  f"its first request; GETs of keys not written yet answer 404, which is not an error here.", ""]


def cold_section(folder, runs):
    startup = read_tsv(os.path.join(folder, "startup.tsv"))
    colds = [r for r in runs if r["kind"] == "cold"]
    if not startup and not colds:
        return []
    out = ["## cold start", ""]
    if startup:
        out += startup_lines(startup)
    for r in colds:
        out += cold_run_lines(folder, r)
    return out


def _k6_files(folder, suffix):
    """The k6 summaries run.sh names <target><suffix>, and the targets."""
    kdir = os.path.join(folder, "k6")
    names = sorted(f for f in os.listdir(kdir) if f.endswith(suffix)) if os.path.isdir(kdir) else []
    return [(f[:-len(suffix)], k6.load_summary(os.path.join(kdir, f))) for f in names]


def warmup_section(folder):
    rows = []
    for target, s in _k6_files(folder, "_warmup.json"):
        x = k6.summarize(s)
        rows.append(f"| {target} | {k6.config(s).get('rate', '?')} | "
                    f"{x['achieved']:.1f} | {fmt_ms(x['p50'])} | {fmt_ms(x['p99'])} | {fmt_ms(x['max'])} | "
                    f"{x['errors']:.2f} | {fmt_statuses(x['statuses'])} | {x['dropped']} |")
    if not rows:
        return []
    return ["## warm-up (not part of the results)", "",
            "| target | offered/s | achieved/s | p50 | p99 | max | errors % | statuses | dropped |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |"] + rows + [""]


def fill_section(folder):
    rows = []
    for target, s in _k6_files(folder, "_fill.json"):
        secs = s["state"]["testRunDurationMs"] / 1000
        keys = k6.metric(s, "iterations", "count", 0)
        p50, p99, top = (fmt_ms(k6.metric(s, "http_req_duration", key)) for key in ("med", "p(99)", "max"))
        rows.append(f"| {target} | {keys} | {secs:.1f} | {keys / secs if secs else 0:.0f} | "
                    f"{p50} | {p99} | {top} | {fmt_statuses(k6.status_counts(s))} |")
    if not rows:
        return []
    return ["## fill", "", "| target | keys | seconds | keys/s | p50 | p99 | max | statuses |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"] + rows + [""]


def prometheus_digest(path):
    """504s, replica calls failed, rejected by a breaker, and breakers not closed, in one scrape."""
    n = failed = rejected = open_breakers = 0
    with open(path) as fh:
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
    return n, failed, rejected, open_breakers


def node_metrics(folder):
    """The nodes' own counters after each step (run.sh scrapes /actuator/prometheus)."""
    mdir = os.path.join(folder, "metrics")
    if not os.path.isdir(mdir):
        return []
    files = sorted((f for f in os.listdir(mdir) if f.endswith(".prom")),
                   key=lambda f: (os.path.getmtime(os.path.join(mdir, f)), f))
    rows = []
    for f in files:
        n, failed, rejected, open_breakers = prometheus_digest(os.path.join(mdir, f))
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


def memory_section(rss, charts):
    if not rss:
        return []
    overall = {}
    for _, name, kib in rss:
        overall[name] = max(overall.get(name, 0), kib)
    out = ["## memory and CPU over the whole run", "", "| process | peak RSS MiB |", "| --- | ---: |"]
    out += [f"| {n} | {v / 1024:.0f} |" for n, v in sorted(overall.items())]
    out.append("")
    for name in charts.get("_rss", []):
        out += [f"![{name}](charts/{name})", ""]
    return out


def timings_section(folder):
    timings = read_tsv(os.path.join(folder, "timings.tsv"))
    if not timings:
        return []
    return (["## timings", "", "| step | seconds |", "| --- | ---: |"]
            + [f"| {t['step']} | {t['seconds']} |" for t in timings] + [""])


def run_label(r):
    """The folder name run.sh gives a run's profiles."""
    if r["kind"] == "wrk":
        return os.path.basename(r["summary"].split(",")[0]).rsplit("-", 1)[0]
    return os.path.basename(r["summary"])[:-len(".json")]


def profiles_section(folder, runs, env):
    pdir = os.path.join(folder, "profiles")
    if not os.path.isdir(pdir):
        return []
    order = [run_label(r) for r in runs]
    labels = [d for d in os.listdir(pdir) if os.path.isdir(os.path.join(pdir, d))]
    labels.sort(key=lambda d: (order.index(d) if d in order else len(order), d))
    rows = []
    for label in labels:
        htmls = sorted(f for f in os.listdir(os.path.join(pdir, label)) if f.endswith(".html"))
        for name in dict.fromkeys(f[:-len(".html")].rpartition("-")[0] for f in htmls):
            cells = [f"[{kind}](profiles/{label}/{name}-{kind}.html)" if f"{name}-{kind}.html" in htmls else "-"
                     for kind in ("cpu", "alloc", "lock")]
            rows.append(f"| {label} | {name} | " + " | ".join(cells) + " |")
    if not rows:
        return []
    engine = [ln for ln in env if ln.startswith("profiler:")]
    return ["## profiles", "",
            "Flame graphs of each JVM of the target during each measured run (" +
            (engine[0][len("profiler: "):] if engine else "async-profiler: see env.txt") + "). Profiling "
            "costs CPU: compare the figures of a PROFILE=1 run only with those of another PROFILE=1 run.", "",
            "| run | process | CPU | allocation | lock |", "| --- | --- | --- | --- | --- |"] + rows + [""]
