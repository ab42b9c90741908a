import base64
import gzip
import json
import os
import tempfile
import unittest

from reporting import k6, vegeta


class VegetaTest(unittest.TestCase):
    def test_ringkv_targets_are_wrks_requests_with_the_token_and_replicas(self):
        ts = vegeta.targets(store="ringkv", nodes=["https://a:1", "https://b:2"], keyspace=10, value_size=8,
                            read_ratio=0.5, replicas="2/3", count=200, token="t0k", seed=1)
        self.assertEqual({t["url"].split("/v0/")[0] for t in ts}, {"https://a:1", "https://b:2"})
        gets = [t for t in ts if t["method"] == "GET"]
        puts = [t for t in ts if t["method"] == "PUT"]
        self.assertTrue(60 < len(gets) < 140, len(gets))
        self.assertEqual(len(gets) + len(puts), 200)
        self.assertRegex(gets[0]["url"], r"/v0/entity\?id=k000000000\d&replicas=2/3$")
        self.assertEqual(gets[0]["header"], {"Authorization": ["Bearer t0k"]})
        self.assertNotIn("body", gets[0])
        self.assertEqual(len(base64.b64decode(puts[0]["body"])), 8)
        self.assertEqual(puts[0]["header"]["Content-Type"], ["application/octet-stream"])

    def test_etcd_targets_post_base64_json_with_the_bare_token(self):
        ts = vegeta.targets(store="etcd", nodes=["http://e:2379"], keyspace=10, value_size=8, read_ratio=0.5,
                            replicas="", count=50, token="etcdtok", seed=2)
        for t in ts:
            self.assertEqual(t["method"], "POST")
            self.assertEqual(t["header"]["Authorization"], ["etcdtok"])
            body = json.loads(base64.b64decode(t["body"]))
            self.assertRegex(base64.b64decode(body["key"]).decode(), r"^k000000000\d$")
            if t["url"].endswith("/v3/kv/put"):
                self.assertEqual(len(base64.b64decode(body["value"])), 8)
            else:
                self.assertEqual(t["url"], "http://e:2379/v3/kv/range")
                self.assertNotIn("value", body)

    def test_summary_reads_as_k6s_with_failures_drops_and_each_operations_p99(self):
        rows = [(200, ms, "GET", "http://n/v0/entity?id=k1") for ms in range(1, 91)]
        rows += [(201, 100 + ms, "PUT", "http://n/v0/entity?id=k1") for ms in range(1, 10)]
        rows += [(0, 10000, "PUT", "http://n/v0/entity?id=k1")]  # a timeout
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.csv.gz")
            with gzip.open(path, "wt") as f:
                for i, (status, ms, method, url) in enumerate(rows):
                    f.write(f"{1_000_000 + i},{status},{ms * 1_000_000},10,20,,,,{i},{method},{url},\n")
            s = vegeta.summary(path, "mixed", rate=5, duration_s=30)
        r = k6.summarize(s)
        self.assertEqual(r["requests"], 100)
        self.assertAlmostEqual(r["errors"], 1.0)
        self.assertEqual(r["dropped"], 50)  # 150 offered, 100 sent
        self.assertEqual(r["statuses"], {0: 1, 200: 90, 201: 9})
        self.assertEqual(r["p50"], 50)
        self.assertEqual(r["p99"], 109)
        self.assertEqual(r["max"], 10000)
        self.assertEqual(r["ops"], {"get": 90, "put": 10000})
        self.assertEqual(k6.config(s)["client"], "vegeta")

    def test_the_first_seconds_are_left_out(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.csv")
            with open(path, "w") as f:
                # 10 slow requests in the first second (connections opening), then 100 fast ones.
                for i in range(10):
                    f.write(f"{i * 100_000_000},200,{500 * 1_000_000},0,0,,,,{i},GET,http://n/v0/entity?id=k1,\n")
                for i in range(100):
                    f.write(f"{2_000_000_000 + i * 10_000_000},200,{2 * 1_000_000},0,0,,,,{i},GET,http://n/v0/entity?id=k1,\n")
            r = k6.summarize(vegeta.summary(path, "mixed", rate=50, duration_s=2, settle_s=1))
            self.assertEqual(r["requests"], 100)
            self.assertEqual(r["max"], 2)
            self.assertEqual(k6.config(vegeta.summary(path, "mixed", 50, 2, 1))["settling"], 10)
            self.assertEqual(k6.summarize(vegeta.summary(path, "mixed", rate=55, duration_s=2))["max"], 500)


if __name__ == "__main__":
    unittest.main()
