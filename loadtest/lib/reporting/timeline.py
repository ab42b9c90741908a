"""k6's per-request CSV (--out csv): per-second buckets for the charts, and windows of the cold start."""
import csv
import gzip
import math
from collections import defaultdict

from .k6 import percentile

COLD_WINDOW_S = 15


def request_rows(csv_path):
    """(epoch ms, duration ms, failed, status) of every http_req_duration sample; timestamps may be
    unix_milli (run.sh's K6_CSV_TIME_FORMAT) or unix seconds."""
    opener = gzip.open if csv_path.endswith(".gz") else open
    with opener(csv_path, "rt", newline="") as f:
        reader = csv.reader(f)
        col = {name: i for i, name in enumerate(next(reader))}
        i_name, i_time, i_value = col["metric_name"], col["timestamp"], col["metric_value"]
        i_expected, i_status = col.get("expected_response"), col.get("status")
        for row in reader:
            if row[i_name] != "http_req_duration":
                continue
            ts = int(row[i_time])
            yield (ts if ts > 10**11 else ts * 1000, float(row[i_value]),
                   i_expected is not None and row[i_expected] == "false",
                   row[i_status] if i_status is not None else "")


def timeline(csv_path, out_path):
    """Writes second, requests, failed, p50, p90, p99, max per second of the run."""
    buckets = defaultdict(list)
    failed = defaultdict(int)
    for ms, value, fail, _ in request_rows(csv_path):
        buckets[ms // 1000].append(value)
        failed[ms // 1000] += fail
    with open(out_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["second", "requests", "failed", "p50", "p90", "p99", "max"])
        if buckets:
            first = min(buckets)
            for sec in range(first, max(buckets) + 1):
                vals = sorted(buckets.get(sec, []))
                w.writerow([sec - first, len(vals), failed.get(sec, 0)]
                           + [f"{percentile(vals, p):.3f}" for p in (50, 90, 99)]
                           + [f"{vals[-1]:.3f}" if vals else "nan"])


def read_timeline(path):
    with open(path, newline="") as f:
        return [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]


def csv_windows(csv_path, duration_s, width=COLD_WINDOW_S):
    """Requests, failures, statuses and percentiles per window of `width` seconds of a k6 CSV,
    counted from its first request; samples past the run's end go to the last one."""
    rows = list(request_rows(csv_path))
    if not rows:
        return []
    first = min(r[0] for r in rows)
    n = max(1, int(math.ceil(duration_s / width))) if duration_s else None
    wins = defaultdict(lambda: {"values": [], "failed": 0, "statuses": defaultdict(int)})
    for ms, v, failed, status in rows:
        i = int((ms - first) // (width * 1000))
        if n is not None:
            i = min(i, n - 1)
        w = wins[i]
        w["values"].append(v)
        w["failed"] += failed
        w["statuses"][int(status) if status.isdigit() else 0] += 1
    out = []
    for i in sorted(wins):
        w = wins[i]
        vals = sorted(w["values"])
        end = (i + 1) * width if n is None else (duration_s if i == n - 1 else min((i + 1) * width, duration_s))
        out.append({"from": i * width, "to": end, "requests": len(vals),
                    "errors": 100.0 * w["failed"] / len(vals), "statuses": dict(sorted(w["statuses"].items())),
                    "p50": percentile(vals, 50), "p99": percentile(vals, 99), "max": vals[-1]})
    return out


def timeline_windows(rows, width=COLD_WINDOW_S):
    """The same from the per-second timeline when the raw CSV is gone: requests and failures are
    exact, the p99 is the highest of the seconds' p99s (an upper bound), no statuses."""
    wins = defaultdict(list)
    for r in rows:
        wins[int(r["second"] // width)].append(r)
    out = []
    for i in sorted(wins):
        rs = [r for r in wins[i] if r["requests"]]
        reqs = sum(r["requests"] for r in wins[i])
        out.append({"from": i * width, "to": (i + 1) * width, "requests": int(reqs),
                    "errors": 100.0 * sum(r["failed"] for r in wins[i]) / reqs if reqs else float("nan"),
                    "statuses": {}, "p50": float("nan"),
                    "p99": max((r["p99"] for r in rs), default=float("nan")),
                    "max": max((r["max"] for r in rs), default=float("nan")), "approx": True})
    return out
