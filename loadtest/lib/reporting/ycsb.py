"""loadtest/ycsb.sh's report: report.md (tables, ratios against etcd) and ycsb.png from the run's
results.tsv (a row per target and workload), loads.tsv (a row per target's load phase) and env.txt."""
import csv
import os

WORKLOAD_NAMES = {
    "a": "A: 50 % read / 50 % update",
    "b": "B: 95 % read / 5 % update",
    "c": "C: read only",
    "e": "E: 95 % short scans / 5 % inserts",
}
TARGET_NAMES = {
    "cluster": "ringkv, 3 nodes, 2/3",
    "single": "ringkv, 1 node",
    "etcd": "etcd, 3 members",
}


def read_tsv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def ratio(value, against):
    try:
        a, b = float(value), float(against)
    except (TypeError, ValueError):
        return "-"
    return f"{a / b:.2f}x" if b > 0 else "-"


def results_table(results):
    by_key = {(r["target"], r["workload"]): r for r in results}
    lines = [
        "| workload | target | ops/s | p50 / p99 / p99.9 ms | not 2xx | socket errors | servers' CPU µs/op | machine µs/op | peak RSS MiB per server | ops/s ÷ etcd | p99 ÷ etcd |",
        "|---|---|--:|--:|--:|--:|--:|--:|---|--:|--:|",
    ]
    for w in dict.fromkeys(r["workload"] for r in results):
        etcd = by_key.get(("etcd", w), {})
        for r in (r for r in results if r["workload"] == w):
            vs_ops = vs_p99 = "-"
            if etcd and r["target"] != "etcd":
                vs_ops, vs_p99 = ratio(r["ops_per_s"], etcd["ops_per_s"]), ratio(r["p99_ms"], etcd["p99_ms"])
            lines.append(
                f"| {WORKLOAD_NAMES.get(w, w)} | {TARGET_NAMES.get(r['target'], r['target'])} | **{r['ops_per_s']}** "
                f"| {r['p50_ms']} / {r['p99_ms']} / {r['p999_ms']} | {r['not_2xx']} | {r['socket_errors']} "
                f"| {r['server_cpu_us']} | {r['machine_cpu_us']} | {r['peak_rss_mib']} | {vs_ops} | {vs_p99} |")
    return lines


def loads_table(loads, logical_mib):
    lines = [
        f"Each server should hold every record: {logical_mib:.0f} MiB of keys and values.",
        "",
        "| target | keys | seconds | keys/s | answers not OK | socket errors | p50 / p99 ms | peak RSS MiB | disk MiB per server, total (WAL): after the load | after settling | at the end | disk ÷ logical, at the end |",
        "|---|--:|--:|--:|---|---|--:|---|---|---|---|--:|",
    ]
    for r in loads:
        lines.append(
            f"| {TARGET_NAMES.get(r['target'], r['target'])} | {r['keys']} | {r['seconds']} | **{r['keys_per_s']}** "
            f"| {r['not_ok']} | {r['socket_errors']} | {r['p50_ms']} / {r['p99_ms']} | {r['peak_rss_mib']} "
            f"| {r['disk_after_load_mib']} | {r['disk_settled_mib']} | {r['disk_end_mib']} | {r['disk_ratio_end']} |")
    return lines


def chart(folder, results):
    """ycsb.png: operations/s and p99 per workload, a bar per target; None without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    workloads = list(dict.fromkeys(r["workload"] for r in results))
    targets = list(dict.fromkeys(r["target"] for r in results))
    by_key = {(r["target"], r["workload"]): r for r in results}
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    width = 0.8 / max(len(targets), 1)
    for i, t in enumerate(targets):
        xs = [j + i * width for j in range(len(workloads))]
        for ax, field in ((axes[0], "ops_per_s"), (axes[1], "p99_ms")):
            ys = [float(by_key[(t, w)][field]) if (t, w) in by_key else 0 for w in workloads]
            ax.bar(xs, ys, width, label=TARGET_NAMES.get(t, t))
    for ax, title in ((axes[0], "operations/s (higher is better)"), (axes[1], "p99 ms (lower is better)")):
        ax.set_xticks([j + width * (len(targets) - 1) / 2 for j in range(len(workloads))])
        ax.set_xticklabels([w.upper() for w in workloads])
        ax.set_title(title)
        ax.grid(axis="y", alpha=0.3)
    axes[1].set_yscale("log")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "ycsb.png"), dpi=110)
    plt.close(fig)
    return "ycsb.png"


def report(folder, logical_bytes):
    results = read_tsv(os.path.join(folder, "results.tsv"))
    loads = read_tsv(os.path.join(folder, "loads.tsv"))
    env = ""
    if os.path.exists(os.path.join(folder, "env.txt")):
        with open(os.path.join(folder, "env.txt")) as f:
            env = f.read()
    lines = ["# YCSB core workloads", ""]
    picture = chart(folder, results) if results else None
    lines += [f"![operations/s and p99 per workload]({picture})", ""] if picture else ["(no chart: matplotlib is missing)", ""]
    lines += ["## Workloads", ""] + results_table(results) + [""]
    lines += [
        "- ops/s: operations answered ÷ the run's seconds, three wrk processes (closed loop) together; "
        "p50/p99/p99.9 over every operation of the workload (wrk keeps one histogram).",
        "- servers' CPU: utime + stime of the target's processes during the run ÷ its operations; "
        "machine: every process's, wrk and the kernel included.",
        "",
        "## Load phase", "",
    ] + loads_table(loads, logical_bytes / 1048576) + ["", "## The run", ""]
    lines += [f"- {line}" for line in env.splitlines() if line.strip()]
    with open(os.path.join(folder, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
