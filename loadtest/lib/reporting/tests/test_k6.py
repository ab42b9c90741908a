import json
import math
import os
import tempfile
import unittest

from reporting import k6
from reporting.tests.fixtures import k6_summary


class K6Test(unittest.TestCase):
    def test_durations_in_k6s_units(self):
        self.assertEqual(k6.parse_duration("1m30s"), 90)
        self.assertEqual(k6.parse_duration("500ms"), 0.5)
        self.assertEqual(k6.parse_duration("2h"), 7200)
        self.assertEqual(k6.parse_duration("12"), 12.0)

    def test_percentile_is_the_nearest_rank(self):
        values = list(range(1, 101))
        self.assertEqual(k6.percentile(values, 50), 50)
        self.assertEqual(k6.percentile(values, 99), 99)
        self.assertEqual(k6.percentile([7], 99), 7)
        self.assertTrue(math.isnan(k6.percentile([], 50)))

    def test_summarize_takes_the_rate_from_the_configured_duration(self):
        x = k6.summarize(k6_summary(rate=300, requests=6000, p99=8.0, statuses={201: 5990, 504: 10}, missed=True))
        self.assertEqual(x["achieved"], 300)
        self.assertEqual(x["p99"], 8.0)
        self.assertEqual(x["statuses"], {201: 5990, 504: 10})
        self.assertEqual(x["ops"], {"get": 8.0})
        self.assertEqual(x["failed_thresholds"], ["http_req_duration p(99)<10"])

    def test_formats(self):
        self.assertEqual(k6.fmt_ms(12.345), "12.3")
        self.assertEqual(k6.fmt_ms(1.234), "1.23")
        self.assertEqual(k6.fmt_ms(float("nan")), "-")
        self.assertEqual(k6.fmt_statuses({}), "-")
        self.assertEqual(k6.fmt_statuses({200: 3, 504: 1}), "200:3 504:1")

    def test_line(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.json")
            with open(path, "w") as f:
                json.dump(k6_summary(rate=300, requests=6000, dropped=4), f)
            self.assertEqual(k6.line(path), "mixed: offered 300/s achieved 300.0/s, p50 1.00 p99 8.00 p99.9 16.0 "
                                            "max 24.0 ms get-p99 8.00, errors 0.00%, statuses 201:6000, dropped 4")


if __name__ == "__main__":
    unittest.main()
