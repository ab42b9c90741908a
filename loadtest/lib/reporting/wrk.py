"""wrk's runs: each process's output (run.sh's "# url:" line and common.lua's WRK_SUMMARY JSON),
the processes of one run together, and the report's section about them."""
import json
import os
from collections import defaultdict

from .k6 import fmt_ms
from .samples import cpu_cell, busy_cell, rss_cell
from .runs import ratio, variant

PCTS = ("p50", "p90", "p99", "p99.9", "max")
# The targets compared at the same concurrency, in the report's order.
RATIO_PAIRS = [("cluster", "single"), ("single", "netty"), ("single", "webflux"), ("webflux", "netty"),
               ("cluster", "etcd"), ("cluster-sync", "etcd"), ("cluster-sync", "cluster"),
               ("cluster-secure", "etcd-secure"), ("cluster-secure", "cluster"), ("etcd-secure", "etcd")]


def load_wrk(folder, files):
    """Each wrk process's output: its URL and its WRK_SUMMARY JSON (None when missing)."""
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
    """The processes together: rates and counts add up; wrk merges no histograms, so the
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
    for label in PCTS:
        out[label] = max(x["latency_ms"].get(label, float("nan")) for x in ok)
    return out


def error_text(kinds):
    return ", ".join(f"{k} {v}" for k, v in kinds.items() if v) or "0"


def wrk_line(files):
    """One line about a wrk run, as run.sh prints it (files relative to the current folder)."""
    procs = load_wrk(".", files)
    x = summarize_wrk(procs)
    if not x:
        return "wrk: no WRK_SUMMARY in " + " ".join(files)
    each = " + ".join(f"{p['s']['rate']:.0f}" if p["s"] else "?" for p in procs)
    return (f"wrk mixed: {x['achieved']:.1f}/s ({each}), worst of {len(procs)}: p50 {fmt_ms(x['p50'])} "
            f"p99 {fmt_ms(x['p99'])} max {fmt_ms(x['max'])} ms, errors {x['errors_n']}"
            + (f" ({error_text(x['error_kinds'])})" if x["error_kinds"] else "")
            + (f", {x['missing']} process(es) without a summary" if x["missing"] else ""))


def wrk_rate(files):
    """The requests per second of a wrk run, all its processes together (files relative to the
    current folder); 0 when none left a summary."""
    x = summarize_wrk(load_wrk(".", files))
    return x["achieved"] if x else 0.0


def process_rows(r):
    """One table row per wrk process of run r, and the sum of them."""
    out = []
    for i, p in enumerate(r["procs"], 1):
        x = p["s"]
        if not x:
            out.append(f"| {i} | {p['url'] or '?'} | no WRK_SUMMARY in `{p['file']}` |" + " |" * 6)
            continue
        lat = x["latency_ms"]
        out.append(f"| {i} | {p['url'] or '?'} | {x['rate']:.1f} | "
                   + " | ".join(fmt_ms(lat.get(k)) for k in PCTS) + f" | {error_text(x['errors'])} |")
    if r["ok"]:
        x = r["r"]
        out.append(f"| **all** | | **{x['achieved']:.1f}** | {fmt_ms(x['p50'])} (worst) | {fmt_ms(x['p90'])} (worst) | "
                   f"**{fmt_ms(x['p99'])}** (worst) | {fmt_ms(x['p99.9'])} (worst) | {fmt_ms(x['max'])} | "
                   f"{error_text(x['error_kinds'])} |")
    return out


def side_by_side(wr):
    out = ["### wrk: the targets side by side", "",
           "| target | req/s | p50 (worst of 3) | p99 (worst of 3) | errors | errors % | peak RSS MiB | CPU % | CPU ms/req | machine busy % (load) |",
           "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | --- |"]
    for r in wr:
        if not r["ok"]:
            out.append(f"| {variant(r)} | no summary (wrk exit {r['rc']}) |" + " |" * 8)
            continue
        x = r["r"]
        out.append(f"| {variant(r)} | {x['achieved']:.1f} | {fmt_ms(x['p50'])} | {fmt_ms(x['p99'])} | {x['errors_n']} | "
                   f"{x['errors']:.2f} | {rss_cell(r)} | {cpu_cell(r)} | {fmt_ms(r['cpu_per_req'])} | {busy_cell(r)} |")
    out.append("")
    return out + side_by_side_ratios(wr)


def side_by_side_ratios(wr):
    """The pairs of RATIO_PAIRS that both ran, each as one row of ratios."""
    out = []
    by_target = {r["target"]: r for r in wr if r["ok"]}
    rows = []
    for a, b in RATIO_PAIRS:
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
        out += process_rows(r)
        out.append("")
    return out + side_by_side(wr)
