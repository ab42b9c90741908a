import gzip
import os
import tempfile
import unittest

from reporting import timeline

HEADER = "metric_name,timestamp,metric_value,expected_response,status\n"


def k6_csv(path, rows):
    """rows: (ms since 0, duration, ok, status); other metrics' rows are mixed in, as k6 writes them."""
    with gzip.open(path, "wt") as f:
        f.write(HEADER)
        for ms, value, ok, status in rows:
            f.write(f"http_reqs,{1_700_000_000_000 + ms},1,{str(ok).lower()},{status}\n")
            f.write(f"http_req_duration,{1_700_000_000_000 + ms},{value},{str(ok).lower()},{status}\n")


class TimelineTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.csv = os.path.join(self.dir.name, "run.csv.gz")
        # second 0: 1, 2, 3 ms; second 1: nothing; second 2: 10 ms, failed with 504
        k6_csv(self.csv, [(0, 1.0, True, 201), (100, 2.0, True, 200), (900, 3.0, True, 200), (2500, 10.0, False, 504)])

    def tearDown(self):
        self.dir.cleanup()

    def test_per_second_buckets_keep_empty_seconds(self):
        out = os.path.join(self.dir.name, "t.csv")
        timeline.timeline(self.csv, out)
        rows = timeline.read_timeline(out)
        self.assertEqual([r["second"] for r in rows], [0, 1, 2])
        self.assertEqual([r["requests"] for r in rows], [3, 0, 1])
        self.assertEqual([r["failed"] for r in rows], [0, 0, 1])
        self.assertEqual(rows[0]["p50"], 2.0)
        self.assertEqual(rows[0]["max"], 3.0)

    def test_windows_from_the_raw_csv_end_with_the_run(self):
        wins = timeline.csv_windows(self.csv, duration_s=3, width=2)
        self.assertEqual([(w["from"], w["to"], w["requests"]) for w in wins], [(0, 2, 3), (2, 3, 1)])
        self.assertEqual(wins[1]["statuses"], {504: 1})
        self.assertEqual(wins[1]["errors"], 100.0)

    def test_windows_from_the_timeline_bound_the_p99_from_above(self):
        rows = [{"second": s, "requests": 10, "failed": 1 if s == 3 else 0, "p99": float(s), "max": 2.0 * s}
                for s in range(4)]
        wins = timeline.timeline_windows(rows, width=2)
        self.assertEqual([w["p99"] for w in wins], [1.0, 3.0])
        self.assertEqual([w["errors"] for w in wins], [0.0, 5.0])
        self.assertTrue(all(w["approx"] for w in wins))


if __name__ == "__main__":
    unittest.main()
