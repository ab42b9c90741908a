import os
import tempfile
import unittest

from reporting import ycsb

RESULTS = """target\tworkload\tseconds\toperations\tops_per_s\tp50_ms\tp99_ms\tp999_ms\tnot_2xx\tsocket_errors\tserver_cpu_us\tmachine_cpu_us\tpeak_rss_mib
cluster\tb\t60\t600000\t10000\t2.0\t20.0\t40.0\t0\t0\t150\t190\t500, 510, 505
etcd\tb\t60\t240000\t4000\t5.0\t50.0\t90.0\t0\t0\t300\t330\t900, 910, 905
cluster\te\t60\t60000\t1000\t20.0\t80.0\t120.0\t0\t0\t1500\t1800\t520, 530, 525
"""
LOADS = """target\tkeys\tseconds\tkeys_per_s\tnot_ok\tsocket_errors\tp50_ms\tp99_ms\tpeak_rss_mib\tdisk_after_load_mib\tdisk_settled_mib\tdisk_end_mib\tdisk_ratio_end
cluster\t1000\t1.0\t1000\tnone\t0 connect, 0 read, 0 write, 0 timeout\t1.0\t9.0\t400, 401, 402\t2 (1), 2 (1), 2 (1)\t1 (0), 1 (0), 1 (0)\t1 (0), 1 (0), 1 (0)\t1.05
"""


class YcsbReportTest(unittest.TestCase):
    def test_ratios_against_etcd_in_the_same_run(self):
        with tempfile.TemporaryDirectory() as d:
            for name, text in (("results.tsv", RESULTS), ("loads.tsv", LOADS), ("env.txt", "commit: abc1234\n")):
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            ycsb.report(d, 1011 * 1048576)
            with open(os.path.join(d, "report.md")) as f:
                text = f.read()
        self.assertIn("| B: 95 % read / 5 % update | ringkv, 3 nodes, 2/3 | **10000** | 2.0 / 20.0 / 40.0 | 0 | 0 | 150 | 190 | 500, 510, 505 | 2.50x | 0.40x |", text)
        # no etcd row for workload E: no ratio
        self.assertIn("| E: 95 % short scans / 5 % inserts | ringkv, 3 nodes, 2/3 | **1000** | 20.0 / 80.0 / 120.0 | 0 | 0 | 1500 | 1800 | 520, 530, 525 | - | - |", text)
        self.assertIn("Each server should hold every record: 1011 MiB", text)
        self.assertIn("| ringkv, 3 nodes, 2/3 | 1000 | 1.0 | **1000** | none |", text)
        self.assertIn("- commit: abc1234", text)


if __name__ == "__main__":
    unittest.main()
