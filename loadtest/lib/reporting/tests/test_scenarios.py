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

    def test_peak_fractions_compare_ringkv_with_etcd_secured_alike(self):
        def at(target, rate, p99):
            return dict(run(target, rate, p99), scenario="peak-50", rss={}, cpu={}, busy=None, rest_per_req=None)
        rs = [at("cluster", 3000, 8.0), at("etcd", 1500, 16.0), at("cluster-secure", 2000, 12.0),
              at("etcd-secure", 1000, 10.0)]
        rows = [ln for ln in scenarios.peak_fraction_ratios(rs) if "÷" in ln]
        self.assertEqual(rows, ["| cluster ÷ etcd | 2.00 | 1.00 | 0.50 | 0.50 |",
                                "| cluster-secure ÷ etcd-secure | 2.00 | 1.00 | 1.20 | 1.20 |"])
        sections = scenarios.scenario_sections(rs, {})
        self.assertIn("## mixed, open loop at 50 % of each target's own peak", sections)
        # Rates differ by design: no capacity line and no same-rate baseline table for them.
        self.assertFalse(any(ln.startswith("Highest offered rate held") for ln in sections))
        self.assertFalse(any(ln.startswith("Against the baselines") for ln in sections))
        self.assertEqual(scenarios.peak_fraction_ratios(rs[:1]), [])


if __name__ == "__main__":
    unittest.main()
