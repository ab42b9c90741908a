#!/usr/bin/env python3
"""Turns a loadtest/run.sh results folder into report.md and PNG charts.

    python3 loadtest/report.py loadtest/results/<timestamp>      report.md + charts/*.png
    python3 loadtest/report.py --timeline k6.csv.gz out.csv      per-second buckets of a k6 CSV
    python3 loadtest/report.py --line summary.json               one line about a k6 summary
    python3 loadtest/report.py --wrk-line out1.txt out2.txt ...  one line about a wrk run
    python3 loadtest/report.py --wrk-rate out1.txt out2.txt ...  its req/s, all processes together
    python3 loadtest/report.py --vegeta-targets out.jsonl ringkv|etcd url1,url2,...
                                  vegeta's targets of the mixed load (KEYSPACE, VALUE_SIZE,
                                  READ_RATIO, REPLICAS, RINGKV_TOKEN / ETCD_TOKEN from the environment)
    python3 loadtest/report.py --vegeta-summary results.csv.gz out.json scenario rate duration settle
                                  a vegeta run as a summary of the shape lib.js writes, without
                                  the requests of its first settle
    python3 loadtest/report.py --ycsb <folder> <logical-bytes>   loadtest/ycsb.sh's report.md + ycsb.png

The folder holds what run.sh wrote: env.txt, runs.tsv (one line per k6 or wrk run), k6/<run>.json
(handleSummary's JSON), k6/<run>.timeline.csv (per-second latency buckets, made from k6's
--out csv; the cold start's raw CSV k6/<run>.csv.gz is kept), wrk/<run>-<n>.txt (each wrk
process's output, with its WRK_SUMMARY line), startup.tsv (each ringkv node's time to ready),
profiles/<run>/<process>-{cpu,alloc,lock}.html (PROFILE=1), rss.tsv (epoch, process, pid, VmRSS
KiB, CPU ticks, every second), machine.tsv (epoch, busy and total CPU jiffies, 1-minute load)
and timings.tsv.
Charts need matplotlib; without it the report still has every table.
The code is the package loadtest/lib/reporting (tests: python3 -m unittest discover -s loadtest/lib).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))

from reporting.document import report  # noqa: E402
from reporting.k6 import line, parse_duration  # noqa: E402
from reporting.timeline import timeline  # noqa: E402
from reporting.wrk import wrk_line, wrk_rate  # noqa: E402
from reporting import vegeta, ycsb  # noqa: E402


def main(argv):
    if len(argv) == 3 and argv[0] == "--timeline":
        timeline(argv[1], argv[2])
    elif len(argv) == 2 and argv[0] == "--line":
        print(line(argv[1]))
    elif len(argv) >= 2 and argv[0] == "--wrk-line":
        print(wrk_line(argv[1:]))
    elif len(argv) >= 2 and argv[0] == "--wrk-rate":
        print(f"{wrk_rate(argv[1:]):.1f}")
    elif len(argv) == 4 and argv[0] == "--vegeta-targets":
        vegeta.write_targets_from_env(argv[1], argv[2], argv[3])
    elif len(argv) == 7 and argv[0] == "--vegeta-summary":
        vegeta.write_summary(argv[1], argv[2], argv[3], int(argv[4]), parse_duration(argv[5]), parse_duration(argv[6]))
    elif len(argv) == 3 and argv[0] == "--ycsb":
        ycsb.report(argv[1], int(argv[2]))
    elif len(argv) == 1 and not argv[0].startswith("-"):
        report(argv[0])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
