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
                self.assertEqual(wrk.wrk_line(["w-0.txt", "w-1.txt", "w-2.txt"]),
                                 "wrk mixed: 3000.0/s (1000 + 2000 + ?), worst of 3: p50 1.25 p99 5.00 max 15.0 ms, "
                                 "errors 0, 1 process(es) without a summary")
            finally:
                os.chdir(cwd)


if __name__ == "__main__":
    unittest.main()
