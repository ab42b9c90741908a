"""What run.sh's sampler wrote every second: rss.tsv (epoch, process, pid, VmRSS KiB, CPU ticks)
and machine.tsv (epoch, busy and total CPU jiffies, 1-minute load); what a run used of them."""
import os

# The names run.sh gives each target's processes (procs.tsv, rss.tsv).
PROCESS_PREFIX = {"cluster": "node-", "cluster-sync": "sync-", "single": "single-", "netty": "netty-",
                  "webflux": "webflux-", "etcd": "etcd-", "cluster-secure": "secure-node-",
                  "etcd-secure": "secure-etcd-"}


def process_prefix(target):
    return PROCESS_PREFIX.get(target, target + "-")


def read_rss(path):
    """(epoch, name, KiB) samples and (epoch, name, CPU ticks) samples."""
    samples, ticks = [], []
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
    """(epoch, busy jiffies, total jiffies, load1) rows."""
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            for ln in f:
                p = ln.split()
                if len(p) == 4:
                    rows.append((int(p[0]), int(p[1]), int(p[2]), float(p[3])))
    return rows


def _of_target(samples, target, start, end):
    """The samples of the target's processes within [start, end] (the end's next second included)."""
    prefix = process_prefix(target)
    return [(t, name, v) for t, name, v in samples if start <= t <= end + 1 and name.startswith(prefix)]


def cpu_percent(ticks, target, start, end, hz):
    """CPU used by each process of the target during [start, end], in % of one core."""
    first, last = {}, {}
    for t, name, v in _of_target(ticks, target, start, end):
        first.setdefault(name, (t, v))
        last[name] = (t, v)
    out = {}
    for name, (t0, v0) in sorted(first.items()):
        t1, v1 = last[name]
        if t1 > t0:
            out[name] = 100.0 * (v1 - v0) / hz / (t1 - t0)
    return out


def peaks(samples, target, start, end):
    """The highest RSS (KiB) of each process of the target during [start, end]."""
    pk = {}
    for _, name, kib in _of_target(samples, target, start, end):
        pk[name] = max(pk.get(name, 0), kib)
    return dict(sorted(pk.items()))


def machine_busy(machine, start, end):
    """The machine's CPU busy % over [start, end] (all cores), and its highest 1-min load."""
    rows = [r for r in machine if start <= r[0] <= end + 1]
    if len(rows) < 2 or rows[-1][2] == rows[0][2]:
        return None, None
    busy = 100.0 * (rows[-1][1] - rows[0][1]) / (rows[-1][2] - rows[0][2])
    return busy, max(r[3] for r in rows)


# ---- a run's table cells ------------------------------------------------------------------------

def rss_cell(run):
    return " / ".join(f"{v / 1024:.0f}" for v in run["rss"].values()) or "-"


def cpu_cell(run):
    return " / ".join(f"{v:.0f}" for v in run["cpu"].values()) or "-"


def busy_cell(run):
    return f"{run['busy']:.0f} ({run['load']:.1f})" if run["busy"] is not None else "-"
