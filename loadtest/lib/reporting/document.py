"""report.md: the header, then every section, in the order a reader wants them."""
import os

from . import charts, scenarios, sections, wrk
from .folder import load_runs, read_env
from .samples import read_machine, read_rss

LEGEND = ("Latencies in ms as k6 measured them (loopback, k6 on the same machine as the nodes). "
          "Offered: the arrival rate k6 scheduled (open model); achieved: requests completed per second "
          "of the run. Errors: requests outside the expected statuses (`http_req_failed`). "
          "Peak RSS: the highest VmRSS of each JVM during that run, sampled every second. "
          "CPU: each JVM's CPU time during the run, in % of one core; CPU ms/req: the CPU time of all "
          "the target's JVMs per completed request (includes GC and JIT threads); rest ms/req: the rest of the "
          "machine's CPU time per completed request, k6 above all (where it is as large as the target's, the "
          "achieved rate is the shared cores' limit, not the target's alone); machine: the whole machine's CPU "
          "busy % over all cores (k6 and anything else running included) and its highest 1-minute load.")


def images(made, key):
    out = []
    for name in made.get(key, []):
        out += [f"![{name}](charts/{name})", ""]
    return out


def report(folder):
    """Writes <folder>/report.md and <folder>/charts/*.png (the charts when matplotlib is there)."""
    rss, ticks = read_rss(os.path.join(folder, "rss.tsv"))
    machine = read_machine(os.path.join(folder, "machine.tsv"))
    env, hz, cores = read_env(folder)
    runs = load_runs(folder, rss, ticks, machine, hz, cores)
    made = charts.make_charts(folder, runs, rss, ticks, machine, hz, cores)

    out = [f"# ringkv load test, {os.path.basename(os.path.normpath(folder))}", ""]
    out += [f"- {ln}" for ln in env]
    out += ["", LEGEND, ""]
    out += scenarios.scenario_sections([r for r in runs if r["kind"] == "k6"], made)
    out += wrk.wrk_section(runs)
    out += sections.cold_section(folder, runs)
    out += images(made, "_cold")
    out += sections.warmup_section(folder)
    out += sections.node_metrics(folder)
    out += sections.fill_section(folder)
    out += sections.memory_section(rss, made)
    out += sections.timings_section(folder)
    out += sections.profiles_section(folder, runs, env)
    if made.get("_error"):
        out += [f"_No charts: {made['_error']}_", ""]
    with open(os.path.join(folder, "report.md"), "w") as f:
        f.write("\n".join(out))
