"""k6's handleSummary JSON (lib.js): the figures of one run, and how they are printed."""
import json
import math
import re

PCTS = [("p50", "med"), ("p90", "p(90)"), ("p99", "p(99)"), ("p99.9", "p(99.9)"), ("max", "max")]


def parse_duration(text):
    """k6 durations: 30s, 1m30s, 500ms, 2h."""
    total, found = 0.0, False
    for num, unit in re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text):
        found = True
        total += float(num) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]
    return total if found else float(text)


def percentile(sorted_values, p):
    """The nearest-rank percentile of values already sorted; NaN for none."""
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, int(math.ceil(p / 100.0 * len(sorted_values))) - 1))
    return sorted_values[k]


def load_summary(path):
    with open(path) as f:
        return json.load(f)


def config(summary):
    """The settings lib.js wrote beside the metrics."""
    return summary.get("ringkv", {}).get("config", {})


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
    """Requests, achieved rate, errors %, dropped iterations, statuses, missed thresholds, the
    percentiles of PCTS and each operation's p99."""
    if duration_s is None:
        duration_s = parse_duration(config(summary).get("duration", "0s")) or summary["state"]["testRunDurationMs"] / 1000
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
    """One line about a k6 summary, as run.sh prints it after each run."""
    s = load_summary(path)
    r = summarize(s)
    cfg = config(s)
    ops = "".join(f" {op}-p99 {fmt_ms(v)}" for op, v in r["ops"].items())
    return (f"{cfg.get('scenario', '?')}: offered {cfg.get('rate', '?')}/s achieved {r['achieved']:.1f}/s, "
            f"p50 {fmt_ms(r['p50'])} p99 {fmt_ms(r['p99'])} p99.9 {fmt_ms(r['p99.9'])} max {fmt_ms(r['max'])} ms{ops}, "
            f"errors {r['errors']:.2f}%, statuses {fmt_statuses(r['statuses'])}"
            + (f", dropped {r['dropped']}" if r["dropped"] else "")
            + (", THRESHOLDS MISSED" if r["failed_thresholds"] else ""))
