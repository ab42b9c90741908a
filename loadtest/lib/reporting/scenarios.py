"""The k6 rate sweeps: a table per scenario, the highest rate each target held, and each cluster
run against the baselines at the same offered rate; the open-loop runs at a fraction of each
target's own peak (PEAK_FRACTIONS), ringkv against etcd at the same fraction."""
import math

from .k6 import fmt_ms, fmt_statuses
from .runs import ratio, variant, variants
from .samples import busy_cell, cpu_cell, rss_cell

BASELINES = ("single", "netty", "webflux", "etcd", "etcd-secure")
DEFAULT_P99_MS = 10  # lib.js's P99_MS when a summary does not say
# run.sh names a PEAK_FRACTIONS run "peak-<percent>": vegeta's mixed load, open loop, at that
# percent of the rate the target's own wrk run reached.
PEAK_PREFIX = "peak-"
# ringkv and etcd secured alike, compared at the same fraction of their own peaks.
PEAK_PAIRS = [("cluster", "etcd"), ("cluster-secure", "etcd-secure")]


def scenario_table(rs):
    out = ["| target | offered/s | achieved/s | p50 | p90 | p99 | p99.9 | max | errors % | statuses | dropped | peak RSS MiB | CPU % | CPU ms/req | rest ms/req | machine busy % (load) | thresholds |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- | --- | ---: | ---: | --- | --- |"]
    for r in rs:
        if not r["ok"]:
            out.append(f"| {variant(r)} | {r['rate']} | no summary (k6 exit {r['rc']}) |" + " |" * 15)
            continue
        x = r["r"]
        ops = "".join(f"<br>{op} p99 {fmt_ms(v)}" for op, v in x["ops"].items())
        th = "missed: " + "; ".join(x["failed_thresholds"]) if x["failed_thresholds"] else "ok"
        out.append(f"| {variant(r)} | {r['rate']} | {x['achieved']:.1f} | {fmt_ms(x['p50'])} | {fmt_ms(x['p90'])} | "
                   f"{fmt_ms(x['p99'])}{ops} | {fmt_ms(x['p99.9'])} | {fmt_ms(x['max'])} | {x['errors']:.2f} | "
                   f"{fmt_statuses(x['statuses'])} | {x['dropped']} | {rss_cell(r)} | {cpu_cell(r)} | "
                   f"{fmt_ms(r['cpu_per_req'])} | {fmt_ms(r['rest_per_req'])} | {busy_cell(r)} | {th} |")
    out.append("")
    return out


def held(r):
    """The offered rate was held: every request answered as expected, none dropped, the rate
    achieved (within 5 %), and p99 within the run's own P99_MS threshold."""
    x = r["r"]
    limit = r["p99_limit"] if r["p99_limit"] is not None else DEFAULT_P99_MS
    return (x["errors"] == 0 and x["dropped"] == 0 and not math.isnan(x["p99"]) and x["p99"] <= limit
            and x["achieved"] >= 0.95 * r["rate_n"])


def capacity_lines(rs):
    """Per target (and replicas): the highest offered rate held with p99 ≤ P99_MS and no errors."""
    limits = sorted({r["p99_limit"] for r in rs if r["ok"] and r["p99_limit"] is not None})
    limit = "/".join(f"{v:g}" for v in limits) or str(DEFAULT_P99_MS)
    out = [f"Highest offered rate held with p99 ≤ {limit} ms (P99_MS) and no errors (nor dropped iterations, "
           f"and at least 95 % of the offered rate achieved):", ""]
    for v in variants(rs):
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
        if not r["ok"] or r["target"] not in ("cluster", "cluster-sync", "single", "cluster-secure"):
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


def peak_fraction_ratios(rs):
    """ringkv ÷ etcd at the same fraction of their own peaks (each pair of PEAK_PAIRS that ran)."""
    by_target = {r["target"]: r for r in rs if r["ok"]}
    rows = []
    for a, b in PEAK_PAIRS:
        if a in by_target and b in by_target:
            x, y = by_target[a]["r"], by_target[b]["r"]
            rows.append(f"| {a} ÷ {b} | {ratio(x['achieved'], y['achieved'])} | {ratio(x['p50'], y['p50'])} | "
                        f"{ratio(x['p99'], y['p99'])} | {ratio(x['p99.9'], y['p99.9'])} |")
    if not rows:
        return []
    return ["At the same fraction of each one's own peak (achieved: how much more load it carried; "
            "latency: above 1 is slower):", "",
            "| ratio | achieved/s | p50 | p99 | p99.9 |", "| --- | ---: | ---: | ---: | ---: |"] + rows + [""]


def scenario_sections(k6_runs, charts):
    """A section per scenario, in the order the scenarios first ran."""
    out = []
    for scenario in dict.fromkeys(r["scenario"] for r in k6_runs):
        rs = [r for r in k6_runs if r["scenario"] == scenario]
        if scenario.startswith(PEAK_PREFIX):
            percent = scenario[len(PEAK_PREFIX):]
            out += [f"## mixed, open loop at {percent} % of each target's own peak", "",
                    f"vegeta offers each target {percent} % of the rate its closed-loop wrk run reached (section wrk, "
                    "below), the same mixed load at a constant rate: requests leave on schedule whether or not "
                    "earlier ones have answered, so a pause shows in the tail instead of slowing the client down "
                    "(over at most as many connections a node as wrk's: a request that finds them busy waits, "
                    "and the wait counts). The first seconds of each run are sent but not counted (env.txt's "
                    "open loop line). Dropped: requests of the schedule never sent (the client fell behind).", ""]
            out += scenario_table(rs)
            out += peak_fraction_ratios(rs)
            continue
        out += [f"## {scenario}", ""]
        out += scenario_table(rs)
        out += capacity_lines(rs)
        out += baseline_ratios(rs)
        for name in charts.get(scenario, []):
            out += [f"![{name}](charts/{name})", ""]
    return out
