import unittest

from reporting import k6, scenarios
from reporting.tests.fixtures import k6_summary


def run(target, rate, p99, replicas="-", cpu=None, **kw):
    return {"target": target, "replicas": replicas, "rate": str(rate), "rate_n": float(rate), "ok": True,
            "r": k6.summarize(k6_summary(rate, rate * 20, p99=p99, **kw)), "p99_limit": 10, "cpu_per_req": cpu}


class ScenariosTest(unittest.TestCase):
    def test_held_needs_the_rate_no_errors_and_the_p99(self):
        self.assertTrue(scenarios.held(run("single", 300, 9.9)))
        self.assertFalse(scenarios.held(run("single", 300, 10.1)))
        self.assertFalse(scenarios.held(run("single", 300, 5.0, failed=0.001)))
        self.assertFalse(scenarios.held(run("single", 300, 5.0, dropped=1)))

    def test_capacity_names_the_highest_rate_held_and_lower_misses(self):
        lines = scenarios.capacity_lines([run("single", 300, 12.0), run("single", 600, 8.0), run("single", 1200, 30.0),
                                          run("netty", 300, 30.0)])
        self.assertIn("- single node: **600/s** (p99 8.00 ms); not held at 1200/s; yet missed at the lower 300/s", lines)
        self.assertIn("- bare Netty: none of 300/s", lines)

    def test_baseline_ratios_compare_the_same_rate_only(self):
        lines = scenarios.baseline_ratios([run("cluster", 300, 8.0, "2/3", cpu=0.6), run("cluster", 600, 8.0, "2/3"),
                                           run("single", 300, 2.0, cpu=0.2)])
        self.assertEqual(lines[2], "| run | offered/s | p50 × single | p99 × single | achieved × single | CPU/req × single |")
        self.assertEqual(lines[4], "| cluster (3 nodes), replicas 2/3 | 300 | 1.00 | 4.00 | 1.00 | 3.00 |")
        self.assertEqual(len(lines), 6)  # the 600/s run has no baseline at its rate


if __name__ == "__main__":
    unittest.main()
