import os
import tempfile
import unittest

from reporting import document
from reporting.tests.fixtures import results_folder


class DocumentTest(unittest.TestCase):
    def test_a_results_folder_becomes_report_md(self):
        with tempfile.TemporaryDirectory() as d:
            results_folder(d)
            document.report(d)
            with open(os.path.join(d, "report.md")) as f:
                text = f.read()
        self.assertIn("- machine: Linux 6.18 x86_64, 2 cores, 23.5 GiB", text)
        self.assertIn("## mixed", text)
        self.assertIn("- cluster (3 nodes), replicas 2/3: **300/s** (p99 6.00 ms); not held at 600/s", text)
        # against the single node at the same rate; no CPU/req for it: its processes were not sampled
        self.assertIn("| cluster (3 nodes), replicas 2/3 | 300 | 1.00 | 3.00 | 1.00 | - |", text)
        self.assertIn("| **all** | | **6006.0** | 7.50 (worst) | 15.0 (worst) | **30.0** (worst) |", text)
        self.assertIn("## warm-up (not part of the results)", text)
        self.assertIn("| cluster_fill | 18080 | 2 | 3 | 0 | 1 |", text)
        self.assertIn("| cluster | 2000 | 20.0 | 100 |", text)
        self.assertIn("| node-18080 | 294 |", text)
        self.assertIn("| checking tools | 3 |", text)


if __name__ == "__main__":
    unittest.main()
