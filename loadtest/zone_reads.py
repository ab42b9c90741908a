#!/usr/bin/env python3
"""The client of loadtest/zone-reads.sh: fills keys, reads them through every node at one
`replicas`, and counts the replica reads the coordinators sent across zones.

  zone_reads.py fill URLS KEYS CLIENTS            every key written at 3/3 (tried again until 201)
  zone_reads.py read URLS KEYS READS REPLICAS CLIENTS
      READS random keys read at REPLICAS, each through a random node; prints one JSON line:
      {"replicas", "reads", "failed", "p50_ms", "p99_ms", "same", "other", "crossed"}, where
      same/other are the growth of every node's ringkv_replica_reads_total{zone=...} over the run
      and crossed is other / (same + other).

URLS is comma-separated (http://127.0.0.1:PORT,...). Plain HTTP, no tokens: the nodes the
benchmark starts are open, as bin/cluster's are.
"""
import concurrent.futures
import http.client
import json
import random
import re
import sys
import time
import urllib.parse

COUNTER = re.compile(r'^ringkv_replica_reads_total\{[^}]*zone="(same|other)"[^}]*\}\s+(\S+)$', re.M)


def replica_reads(text):
    """The counter's value by zone label in one node's Prometheus scrape."""
    counts = {"same": 0.0, "other": 0.0}
    for zone, value in COUNTER.findall(text):
        counts[zone] += float(value)
    return counts


def scrape(urls):
    total = {"same": 0.0, "other": 0.0}
    for url in urls:
        parsed = urllib.parse.urlsplit(url)
        connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)
        connection.request("GET", "/actuator/prometheus")
        response = connection.getresponse()
        body = response.read().decode()
        if response.status != 200:
            sys.exit(f"{url}/actuator/prometheus answered {response.status}")
        for zone, value in replica_reads(body).items():
            total[zone] += value
        connection.close()
    return total


class Client:
    """One connection per node, kept open (each worker has its own)."""

    def __init__(self, urls):
        self.connections = []
        for url in urls:
            parsed = urllib.parse.urlsplit(url)
            self.connections.append(http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10))

    def send(self, node, method, path, body=None):
        connection = self.connections[node]
        try:
            connection.request(method, path, body=body)
            response = connection.getresponse()
            response.read()
            return response.status
        except (OSError, http.client.HTTPException):
            connection.close()
            return None


def key(i):
    return f"zone-reads-{i}"


def fill(urls, keys, clients):
    def work(worker):
        client = Client(urls)
        for i in range(worker, keys, clients):
            path = f"/v0/entity?id={key(i)}&replicas=3/3"
            for attempt in range(20):
                if client.send(i % len(urls), "PUT", path, body=key(i).encode()) == 201:
                    break
                time.sleep(0.1)
            else:
                raise RuntimeError(f"{key(i)} could not be written at 3/3")

    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        list(pool.map(work, range(clients)))


def read(urls, keys, reads, replicas, clients):
    before = scrape(urls)
    per_worker = reads // clients

    def work(worker):
        rng = random.Random(worker)
        client = Client(urls)
        latencies, failed = [], 0
        for _ in range(per_worker):
            path = f"/v0/entity?id={key(rng.randrange(keys))}&replicas={replicas}"
            started = time.perf_counter()
            status = client.send(rng.randrange(len(urls)), "GET", path)
            latencies.append((time.perf_counter() - started) * 1000)
            failed += status != 200
        return latencies, failed

    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(work, range(clients)))
    after = scrape(urls)
    latencies = sorted(latency for worker_latencies, _ in results for latency in worker_latencies)
    same, other = after["same"] - before["same"], after["other"] - before["other"]
    print(json.dumps({
        "replicas": replicas,
        "reads": len(latencies),
        "failed": sum(failed for _, failed in results),
        "p50_ms": round(latencies[len(latencies) // 2], 2),
        "p99_ms": round(latencies[int(len(latencies) * 0.99)], 2),
        "same": int(same),
        "other": int(other),
        "crossed": round(other / (same + other), 4) if same + other else None,
    }))


def main(argv):
    if len(argv) < 2 or argv[1] not in ("fill", "read"):
        sys.exit(__doc__)
    urls = argv[2].split(",")
    if argv[1] == "fill":
        fill(urls, int(argv[3]), int(argv[4]))
    else:
        read(urls, int(argv[3]), int(argv[4]), argv[5], int(argv[6]))


if __name__ == "__main__":
    main(sys.argv)
