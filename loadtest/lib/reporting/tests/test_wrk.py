import json
import os
import tempfile
import unittest

from reporting import wrk
from reporting.tests.fixtures import wrk_summary


class WrkTest(unittest.TestCase):
    def test_rates_add_up_and_percentiles_are_the_worst(self):
        procs = [{"s": wrk_summary(1000, 5.0, {"timeout": 2, "status": 0})}, {"s": wrk_summary(2000, 9.0)},
                 {"s": None}]
        x = wrk.summarize_wrk(procs)
        self.assertEqual(x["achieved"], 3000)
        self.assertEqual(x["p99"], 9.0)
        self.assertEqual(x["error_kinds"], {"timeout": 2})
        self.assertEqual(x["missing"], 1)
        self.assertIsNone(wrk.summarize_wrk([{"s": None}]))

    def test_line_reads_each_process_output(self):
        with tempfile.TemporaryDirectory() as d:
            cwd = os.getcwd()
            os.chdir(d)
            try:
                for i, rate in enumerate((1000, 2000)):
                    with open(f"w-{i}.txt", "w") as f:
                        f.write(f"# url: http://127.0.0.1:{18080 + i}\nWRK_SUMMARY {json.dumps(wrk_summary(rate, 4.0 + i))}\n")
                self.assertEqual(wrk.wrk_rate(["w-0.txt", "w-1.txt", "w-2.txt"]), 3000.0)
                self.assertEqual(wrk.wrk_rate(["w-9.txt"]), 0.0)
                self.assertEqual(wrk.wrk_line(["w-0.txt", "w-1.txt", "w-2.txt"]),
                                 "wrk mixed: 3000.0/s (1000 + 2000 + ?), worst of 3: p50 1.25 p99 5.00 max 15.0 ms, "
                                 "errors 0, 1 process(es) without a summary")
            finally:
                os.chdir(cwd)

    def test_secure_targets_are_compared_with_each_other_and_with_their_plain_selves(self):
        def run(target, rate, p99):
            return {"target": target, "replicas": "-", "ok": True, "cpu_per_req": 0.2,
                    "r": {"achieved": rate, "p50": p99 / 4, "p99": p99, "errors_n": 0, "errors": 0.0}}
        runs = [run("cluster", 8000, 60.0), run("etcd", 4000, 40.0), run("cluster-secure", 6000, 80.0),
                run("etcd-secure", 3000, 50.0)]
        rows = [ln for ln in wrk.side_by_side_ratios(runs) if ln.startswith("| ") and "÷" in ln]
        self.assertEqual([ln.split(" | ")[0] for ln in rows],
                         ["| cluster ÷ etcd", "| cluster-secure ÷ etcd-secure", "| cluster-secure ÷ cluster",
                          "| etcd-secure ÷ etcd"])
        self.assertIn("| cluster-secure ÷ etcd-secure | 2.00 | 1.60 | 1.60 |", rows[1])


if __name__ == "__main__":
    unittest.main()
