"""Reads a run.sh results folder: env.txt, runs.tsv and, for every run, its figures and what
the target's processes and the machine used meanwhile."""
import csv
import os
import re

from . import k6, samples, wrk
from .runs import run_kind, to_float
from .timeline import read_timeline


def read_tsv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def read_env(folder):
    """env.txt's lines, and the clock ticks per second and cores it names (100 and 1 otherwise)."""
    env = []
    if os.path.exists(os.path.join(folder, "env.txt")):
        with open(os.path.join(folder, "env.txt")) as f:
            env = [ln.rstrip("\n") for ln in f if ln.strip()]
    hz, cores = 100, 1
    for ln in env:
        if ln.startswith("clock ticks:") and ln.split(":")[1].strip().isdigit():
            hz = int(ln.split(":")[1])
        m = re.search(r"(\d+) cores", ln)
        if ln.startswith("machine:") and m:
            cores = int(m.group(1))
    return env, hz, cores


def figures(folder, run):
    """Sets ok, r (the summary's figures) and p99_limit from the run's k6 summary or wrk outputs."""
    run["p99_limit"] = None
    if run["kind"] == "wrk":
        run["procs"] = wrk.load_wrk(folder, run["summary"].split(","))
        run["r"] = wrk.summarize_wrk(run["procs"])
        run["ok"] = run["r"] is not None
        return
    path = os.path.join(folder, run["summary"])
    run["ok"] = os.path.exists(path)
    if run["ok"]:
        s = k6.load_summary(path)
        run["r"] = k6.summarize(s, k6.parse_duration(run["duration"]))
        run["p99_limit"] = k6.config(s).get("p99Ms")


def usage(run, rss, ticks, machine, hz, cores):
    """Peak RSS and CPU of the target's processes during the run, their CPU per completed request,
    the machine's busy % and load, and the rest of the machine's CPU per request."""
    start, end = int(run["start"]), int(run["end"])
    run["rss"] = samples.peaks(rss, run["target"], start, end)
    run["cpu"] = samples.cpu_percent(ticks, run["target"], start, end, hz)
    # CPU time of all the target's JVMs per completed request (the run's window, in ms).
    secs = end - start
    done = run["r"]["requests"] if run["ok"] else 0
    run["cpu_per_req"] = (sum(run["cpu"].values()) / 100.0 * secs * 1000 / done) if done and run["cpu"] else None
    run["busy"], run["load"] = samples.machine_busy(machine, start, end)
    # The rest of the machine's CPU per request: the load generator above all. Where it is as
    # large as the target's, the achieved rate is the client's limit as much as the server's.
    run["rest_per_req"] = (run["busy"] / 100.0 * cores * secs * 1000 / done - run["cpu_per_req"]) \
        if done and run["busy"] is not None and run["cpu_per_req"] is not None else None


def load_runs(folder, rss, ticks, machine, hz, cores):
    """runs.tsv, each run with its figures, usage and per-second timeline (when there is one)."""
    runs = read_tsv(os.path.join(folder, "runs.tsv"))
    for run in runs:
        run["kind"] = run_kind(run)
        figures(folder, run)
        usage(run, rss, ticks, machine, hz, cores)
        run["rate_n"] = to_float(run["rate"])
        tl = os.path.join(folder, run["csv"].replace(".csv.gz", ".timeline.csv"))
        run["timeline"] = read_timeline(tl) if run["csv"] not in ("", "-") and os.path.exists(tl) else None
    return runs
