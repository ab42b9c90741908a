"""The report's PNG charts (matplotlib; without it, the report says so and keeps its tables)."""
import os
import re
from collections import defaultdict

from .k6 import PCTS
from .runs import variant, variants


def make_charts(folder, runs, rss, ticks=(), machine=(), hz=100, cores=1):
    """Writes <folder>/charts/*.png; returns the names per section (a scenario, _cold, _rss), or
    {"_error": why} without matplotlib."""
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
    for scenario in dict.fromkeys(r["scenario"] for r in k6_runs):
        rs = [r for r in k6_runs if r["scenario"] == scenario and r["ok"]]
        if not rs:
            continue
        name = f"latency-vs-rate-{scenario}.png"
        latency_vs_rate(plt, plain, scenario, rs, os.path.join(cdir, name))
        made[scenario].append(name)
        # Latency over time, one figure per target/replicas with a row per offered rate.
        for v in variants(rs):
            vr = sorted((r for r in rs if variant(r) == v and r["timeline"]), key=lambda r: r["rate_n"])
            if not vr:
                continue
            slug = re.sub(r"[^a-z0-9]+", "-", f"{scenario} {v}".lower()).strip("-")
            name = f"over-time-{slug}.png"
            over_time_figure(plt, plain, vr, f"{scenario}, {v}: latency per second", os.path.join(cdir, name))
            made[scenario].append(name)

    # The cold starts: one figure per cluster target.
    for r in runs:
        if r.get("kind") == "cold" and r["ok"] and r["timeline"]:
            name = f"cold-start-{r['target']}.png"
            over_time_figure(plt, plain, [r], f"{variant(r)}: cold start, mixed at {r['rate']}/s from readiness on",
                             os.path.join(cdir, name))
            made["_cold"].append(name)

    if rss:
        memory_cpu(plt, runs, rss, ticks, machine, hz, cores, os.path.join(cdir, "memory-cpu.png"))
        made["_rss"].append("memory-cpu.png")
    return made


def latency_vs_rate(plt, plain, scenario, rs, path):
    """p50, p90, p99 and p99.9 against the offered rate, one line per target/replicas."""
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5), sharex=True)
    for ax, (label, _) in zip(axes.flat, PCTS[:4]):
        for v in variants(rs):
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
    fig.savefig(path, dpi=90)
    plt.close(fig)


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


def memory_cpu(plt, runs, rss, ticks, machine, hz, cores, path):
    """Each process's RSS and CPU, and the whole machine's CPU, over the benchmark."""
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
    mpts = [(b[0] - t0, 100.0 * cores * (b[1] - a[1]) / (b[2] - a[2]))
            for a, b in zip(machine, machine[1:]) if b[2] > a[2] and b[0] >= t0]
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
    fig.savefig(path, dpi=90)
    plt.close(fig)
