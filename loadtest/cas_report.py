#!/usr/bin/env python3
"""The report of loadtest/cas.sh, from its results folder (results.tsv and k6's summaries).

  cas_report.py FOLDER AFTER-COMMIT [BEFORE-LABEL]   the report (markdown) on stdout
  cas_report.py --line SUMMARY.json                  one run in one line; exit 1 when no write succeeded

A run's figures: successful writes per second (k6's rmw_success over the run's length), the write
request's p50 and p99 (http_req_duration{op:write}: the conditional PUT, the txn, or the plain PUT
alone), conflicts (ringkv 412, etcd succeeded:false), errors by phase and status, all requests per
second (reads and writes), the read's p50/p99, and CPU seconds of the servers, of k6 and of everything else on the machine (others: the
machine's busy time less the two; another job sharing the cores shows there).
"""
import csv
import json
import os
import sys


def metric(data, name, stat):
    m = data["metrics"].get(name)
    return m["values"].get(stat, 0) if m else 0


def figures(path):
    data = json.load(open(path))
    seconds = data["state"]["testRunDurationMs"] / 1000
    errors_by_status = {}
    for name, m in data["metrics"].items():
        if name.startswith("rmw_error_status{status:") and m["values"]["count"]:
            errors_by_status[name[len("rmw_error_status{status:"):-1]] = int(m["values"]["count"])
    return {
        "seconds": seconds,
        "success": int(metric(data, "rmw_success", "count")),
        "conflict": int(metric(data, "rmw_conflict", "count")),
        "error_read": int(metric(data, "rmw_error{phase:read}", "count")),
        "error_write": int(metric(data, "rmw_error{phase:write}", "count")),
        "errors_by_status": errors_by_status,
        "requests": int(metric(data, "http_reqs", "count")),
        "write_p50": metric(data, "http_req_duration{op:write}", "med"),
        "write_p99": metric(data, "http_req_duration{op:write}", "p(99)"),
        "read_p50": metric(data, "http_req_duration{op:read}", "med"),
        "read_p99": metric(data, "http_req_duration{op:read}", "p(99)"),
        "title": data.get("ringkv", {}).get("title", ""),
    }


def errors_text(f):
    total = f["error_read"] + f["error_write"]
    if not total:
        return "0"
    statuses = ", ".join(f"{n} × {s}" for s, n in sorted(f["errors_by_status"].items()))
    return f"{total} ({statuses})"


def cpu_split(r):
    """CPU seconds over the run: the servers measured, k6, and everything else on the machine."""
    servers, k6, machine = float(r["servers_cpu_s"]), float(r["k6_cpu_s"]), float(r["machine_cpu_s"])
    return f"{servers:.0f} / {k6:.0f} / {max(machine - servers - k6, 0):.0f}"


def line(path):
    f = figures(path)
    print(f"    {f['title']}: {f['success'] / f['seconds']:,.0f} successful writes/s, write p50 {f['write_p50']:.2f} "
          f"p99 {f['write_p99']:.2f} ms, {f['conflict']} conflicts, errors {errors_text(f)}, "
          f"{f['requests'] / f['seconds']:,.0f} req/s")
    return 0 if f["success"] > 0 else 1


def report(folder, after, before):
    rows = list(csv.DictReader(open(os.path.join(folder, "results.tsv")), delimiter="\t"))
    for r in rows:
        r.update(figures(os.path.join(folder, r["summary"])))
    env = open(os.path.join(folder, "env.txt")).read()
    out = []
    out.append(f"# Conditional writes against etcd's compare-and-swap (loadtest/cas.sh), build {after}\n")
    out.append("```\n" + env.rstrip() + "\n```\n")
    out.append("Each iteration: a random key read, then written back through the same node. Writes/s are "
               "successful writes per second; p50/p99 are of the write request alone (the conditional PUT, "
               "the txn, the plain PUT); CPU is seconds over the run (servers: the three nodes or members).\n")

    def row(r, name):
        cpu_per = 1e6 * float(r["servers_cpu_s"]) / max(r["success"], 1)
        return (f"| {name} | {r['vus']} | **{r['success'] / r['seconds']:,.0f}** | {r['write_p50']:.2f} / {r['write_p99']:.2f} "
                f"| {r['read_p50']:.2f} / {r['read_p99']:.2f} | {r['conflict']:,} | {errors_text(r)} "
                f"| {r['requests'] / r['seconds']:,.0f} | {cpu_per:,.0f} | {cpu_split(r)} |")

    names = {("cluster", "cas"): "ringkv CAS (If-Match)", ("etcd", "cas"): "etcd CAS (txn)",
             ("cluster", "plain"): f"ringkv plain ({after})", ("before", "plain"): f"ringkv plain ({before or 'before'})"}
    header = ("| loop | VUs | writes/s | write p50 / p99 ms | read p50 / p99 ms | conflicts | errors | req/s "
              "| servers' CPU µs per write | CPU s: servers / k6 / others |\n| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
    first = [r for r in rows if r["round"] == "1"]
    out.append("## Conditional writes, etcd, plain writes\n")
    out.append(header)
    for key in [("cluster", "cas"), ("etcd", "cas"), ("cluster", "plain")]:
        for r in first:
            if (r["target"], r["loop"]) == key:
                out.append(row(r, names[key]))
    out.append("")

    def find(target, loop, vus, round_="1"):
        for r in rows:
            if (r["target"], r["loop"], r["vus"], r["round"]) == (target, loop, vus, round_):
                return r
        return None

    ratios = []
    for vus in sorted({r["vus"] for r in rows}, key=int):
        cas, etcd, plain = find("cluster", "cas", vus), find("etcd", "cas", vus), find("cluster", "plain", vus)
        parts = []
        if cas and etcd:
            parts.append(f"ringkv CAS ÷ etcd CAS {cas['success'] / cas['seconds'] / (etcd['success'] / etcd['seconds']):.2f}× (goal ≥ 1)")
        if cas and plain:
            parts.append(f"ringkv CAS ÷ ringkv plain {cas['success'] / cas['seconds'] / (plain['success'] / plain['seconds']):.2f} (goal ≥ 0.33)")
        if parts:
            ratios.append(f"- {vus} VUs: " + "; ".join(parts))
    if ratios:
        out.append("\n".join(ratios) + "\n")

    ab = [r for r in rows if r["loop"] == "plain" and r["target"] in ("before", "cluster")]
    if any(r["target"] == "before" for r in ab):
        out.append(f"## Plain requests before ({before}) and after ({after}) conditional writes, back to back\n")
        out.append("| round | VUs | build | req/s | GET p50 / p99 ms | PUT p50 / p99 ms | errors | servers' CPU µs per request | CPU s: servers / k6 / others |")
        out.append("| ---: | ---: | --- | ---: | ---: | ---: | --- | ---: | ---: |")
        for r in sorted(ab, key=lambda r: (int(r["round"]), int(r["vus"]), r["target"] != "before")):
            out.append(f"| {r['round']} | {r['vus']} | {before if r['target'] == 'before' else after} "
                       f"| **{r['requests'] / r['seconds']:,.0f}** | {r['read_p50']:.2f} / {r['read_p99']:.2f} "
                       f"| {r['write_p50']:.2f} / {r['write_p99']:.2f} | {errors_text(r)} "
                       f"| {1e6 * float(r['servers_cpu_s']) / max(r['requests'], 1):,.0f} | {cpu_split(r)} |")
        diffs = []
        for r in ab:
            if r["target"] != "cluster":
                continue
            b = find("before", "plain", r["vus"], r["round"])
            if b:
                diffs.append(f"- round {r['round']}, {r['vus']} VUs: after ÷ before req/s "
                             f"{(r['requests'] / r['seconds']) / (b['requests'] / b['seconds']):.3f}")
        out.append("")
        if diffs:
            out.append("\n".join(diffs) + "\n")
    print("\n".join(out))
    if any(r["success"] == 0 for r in rows):
        sys.exit("a run had no successful write")


def main(argv):
    if len(argv) == 3 and argv[1] == "--line":
        sys.exit(line(argv[2]))
    if len(argv) in (3, 4):
        return report(argv[1], argv[2], argv[3] if len(argv) == 4 else "")
    sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
