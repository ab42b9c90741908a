#!/usr/bin/env python3
"""How a three-node ringkv cluster on loopback keeps serving while its nodes restart: a
measurement, not a test (it never fails on a number), to run once per jar and compare two builds
back to back. Each part starts a fresh cluster with bin/node, as loadtest/run.sh and the process
tests start theirs (-Xmx256m), with Actuator on a management port of its own.

  readmission  per round r, node r % 3 stopped; three replicas=3/3 PUTs through the next node
               (504 expected); node r started and, from then on, every 50 ms: a 3/3 PUT through the
               next node, node r's /v0/status and its readiness. When each first succeeded, and
               how long after status 200 the first 3/3 PUT did.
  rolling      --writers threads on keep-alive connections, PUT (80 %) or DELETE (20 %) at 2/3
               through random nodes, flat out: --seconds-per-node seconds, then each node in turn
               restarted as a rolling restart gated on /v0/status would (SIGTERM, its exit, its
               start, status 200, the next one at once), then --seconds-per-node more. Every
               outcome counted: status codes, refused connects, other errors by class, split by
               whether the request went to the restarting node (SIGTERM to status 200) or not.
  frozen       node 2 SIGSTOPped as soon as its /v0/status answers anything; for 30 s, nodes 0
               and 1's readiness every 200 ms: when each first answered 200 (and what before),
               and how many later polls answered anything else.

  python3 loadtest/restarts.py --jar service/target/ringkv.jar
  python3 loadtest/restarts.py --jar /tmp/base.jar --rounds 2 --only readmission
  PORT_BASE=19600 python3 loadtest/restarts.py --jar /tmp/new.jar --writers 4 --seconds-per-node 10

One line per result, then a JSON line with all of them. Ports: web PORT_BASE..+2, management
PORT_BASE+10..+12 (PORT_BASE defaults to 19500). Data and node logs go to a fresh temporary
folder, removed at the end (kept, and named, when the run stopped early).
"""
import argparse, collections, http.client, json, os, random, secrets, select, shutil, signal
import subprocess, sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PORT_BASE = int(os.environ.get("PORT_BASE", "19500"))
TIMEOUT = 3.0  # seconds per request
READINESS = "/actuator/health/readiness"
results = {}


def request(port, method, path, body=None, timeout=TIMEOUT):
    """One request on a connection of its own: the status, or what went wrong."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body)
        response = conn.getresponse()
        response.read()
        return response.status
    except Exception as e:
        return outcome(e)
    finally:
        conn.close()


def outcome(e):
    return "connection refused" if isinstance(e, ConnectionRefusedError) else type(e).__name__


def put33(port, key):
    return request(port, "PUT", f"/v0/entity?id={key}&replicas=3/3", body=b"restart-probe")


def run_threads(target, args_list):
    threads = [threading.Thread(target=target, args=a, daemon=True) for a in args_list]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


class Cluster:
    def __init__(self, jar, workdir, name):
        self.jar, self.dir, self.secret = jar, os.path.join(workdir, name), secrets.token_hex(16)
        self.ports, self.mgmt = [PORT_BASE + i for i in range(3)], [PORT_BASE + 10 + i for i in range(3)]
        self.procs = [None] * 3
        os.makedirs(self.dir)

    def start(self, i):
        """Starts node i (bin/node execs the JVM: the pid is the node's); returns when it did."""
        port, peers = self.ports[i], ",".join(f"http://127.0.0.1:{p}" for p in self.ports)
        command = ["bin/node", "--jar", self.jar, "--heap", "256m", f"--server.port={port}",
                   f"--ringkv.data-dir={self.dir}/data{i}", f"--ringkv.cluster.self=http://127.0.0.1:{port}",
                   f"--ringkv.cluster.peers={peers}", f"--ringkv.cluster.secret={self.secret}",
                   f"--management.server.port={self.mgmt[i]}"]
        with open(f"{self.dir}/node{i}.log", "ab") as log:  # a session of its own: Ctrl-C reaches us only
            self.procs[i] = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, start_new_session=True)
        return time.monotonic()

    def stop(self, i, timeout=60):
        """SIGTERM (after SIGCONT: a frozen JVM never handles it) and its exit; SIGKILL after timeout."""
        proc, self.procs[i] = self.procs[i], None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                print(f"node {i} still runs {timeout} s after SIGTERM: SIGKILL", flush=True)
                proc.kill()
                proc.wait()

    def wait_for(self, i, port, path, ok=lambda answer: answer == 200, pause=0.1):
        deadline = time.monotonic() + 180
        while not ok(request(port, "GET", path, timeout=1)):
            if time.monotonic() > deadline or self.procs[i].poll() is not None:
                raise RuntimeError(f"node {i}: no answer on {path} (see {self.dir}/node{i}.log)")
            time.sleep(pause)

    def start_all(self):
        """All three, until each answers status and readiness 200 and takes a 3/3 write."""
        for i in range(3):
            self.start(i)
        for i in range(3):
            self.wait_for(i, self.ports[i], "/v0/status")
            self.wait_for(i, self.mgmt[i], READINESS)
        deadline = time.monotonic() + 60
        while not all(put33(p, "warm-up") == 201 for p in self.ports):
            if time.monotonic() > deadline:
                raise RuntimeError("the fresh cluster took no 3/3 write within 60 s")
            time.sleep(0.2)


def readmission(args, cluster):
    cluster.start_all()
    for r in range(args.rounds):
        node, via = r % 3, (r + 1) % 3
        cluster.stop(node)
        down = [put33(cluster.ports[via], f"readmission-{r}-down-{k}") for k in range(3)]
        print(f"round {r}: node {node} stopped; 3/3 PUTs through node {via}: {down}", flush=True)
        probes = {"status": (lambda: request(cluster.ports[node], "GET", "/v0/status"), 200),
                  "readiness": (lambda: request(cluster.mgmt[node], "GET", READINESS), 200),
                  "put": (lambda: put33(cluster.ports[via], f"readmission-{r}"), 201)}
        first, before = {}, {}
        t0 = cluster.start(node)

        def poll(name, probe, ok):  # every 50 ms; 180 s at most, the PUT 30 s after status 200
            others = collections.Counter()
            while first.get(name) is None:
                status = first.get("status")
                limit = status / 1000 + 30 if name == "put" and status is not None else 180
                if time.monotonic() - t0 > limit:
                    break
                answer = probe()
                if answer == ok:
                    first[name] = round((time.monotonic() - t0) * 1000)
                else:
                    others[str(answer)] += 1
                    time.sleep(0.05)
            before[name] = dict(others)
        run_threads(poll, [(name, *p) for name, p in probes.items()])
        status, ready, put = first.get("status"), first.get("readiness"), first.get("put")
        after = None if put is None or status is None else max(0, put - status)
        print(f"round {r}: status 200 at {status} ms, readiness 200 at {ready} ms, "
              f"first 3/3 through a peer at {put} ms ({after} ms after status 200)", flush=True)
        print(f"round {r}: answered before: {before}", flush=True)
        results.setdefault("readmission", []).append(
            {"round": r, "node": node, "puts_while_down": down, "status_ms": status, "readiness_ms": ready,
             "first_3of3_ms": put, "first_3of3_after_status_ms": after, "answered_before": before})


def rolling(args, cluster):
    restarting, done = set(), threading.Event()
    tallies = [collections.Counter() for _ in range(args.writers)]  # (outcome, where) -> requests

    def writer(w):
        counts = tallies[w]
        conns = [http.client.HTTPConnection("127.0.0.1", p, timeout=TIMEOUT) for p in cluster.ports]
        rng = random.Random(w)
        while not done.is_set():
            node = rng.randrange(3)
            conn, key = conns[node], f"rolling-w{w}-{rng.randrange(1000)}"
            method, body = ("PUT", os.urandom(64)) if rng.random() < 0.8 else ("DELETE", None)
            if conn.sock is not None and select.select([conn.sock], [], [], 0)[0]:
                conn.close()  # the server closed this idle connection (EOF): reconnect, count nothing
            sent_to_restarting = node in restarting
            try:
                conn.request(method, f"/v0/entity?id={key}&replicas=2/3", body=body)
                response = conn.getresponse()
                response.read()
                answer = response.status
                if response.will_close:
                    conn.close()
            except Exception as e:
                answer = outcome(e)
                conn.close()
                time.sleep(0.01 if isinstance(e, ConnectionRefusedError) else 0)  # a down node: no spinning
            where = "restarting node" if sent_to_restarting or node in restarting else "other node"
            counts[(answer, where)] += 1

    cluster.start_all()
    writers = [threading.Thread(target=writer, args=(w,), daemon=True) for w in range(args.writers)]
    t_start = time.monotonic()
    try:
        for t in writers:
            t.start()
        time.sleep(args.seconds_per_node)
        for i in range(3):
            restarting.add(i)
            t0 = time.monotonic()
            cluster.stop(i)
            t1 = time.monotonic()
            cluster.start(i)
            cluster.wait_for(i, cluster.ports[i], "/v0/status")
            restarting.discard(i)
            print(f"rolling: node {i} exited {t1 - t0:.1f} s after SIGTERM, "
                  f"status 200 {time.monotonic() - t1:.1f} s after its start", flush=True)
        time.sleep(args.seconds_per_node)
    finally:
        done.set()
        for t in writers:
            if t.ident is not None:
                t.join(TIMEOUT + 1)
    counts = sum(tallies, collections.Counter())
    elapsed, total = time.monotonic() - t_start, sum(counts.values())
    print(f"rolling: {total} requests in {elapsed:.1f} s with {args.writers} writers", flush=True)
    outcomes = {}
    for answer in sorted({a for a, _ in counts}, key=str):
        r, o = counts[(answer, "restarting node")], counts[(answer, "other node")]
        outcomes[str(answer)] = {"restarting node": r, "other node": o}
        print(f"rolling: {answer}: {r + o} (to the restarting node {r}, to another node {o})", flush=True)
    results["rolling"] = {"requests": total, "seconds": round(elapsed, 1), "outcomes": outcomes}


def frozen(args, cluster):
    for i in range(3):
        cluster.start(i)
    cluster.wait_for(2, cluster.ports[2], "/v0/status", ok=lambda answer: isinstance(answer, int), pause=0.05)
    cluster.procs[2].send_signal(signal.SIGSTOP)  # Cluster.stop sends SIGCONT first
    t_freeze, found = time.monotonic(), {}

    def watch(i):
        first, before, later = None, collections.Counter(), collections.Counter()
        while time.monotonic() - t_freeze < 30:
            t = time.monotonic()
            answer = request(cluster.mgmt[i], "GET", READINESS)
            if first is None and answer == 200:
                first = round((time.monotonic() - t_freeze) * 1000)
            elif answer != 200:
                (before if first is None else later)[str(answer)] += 1
            time.sleep(max(0.0, 0.2 - (time.monotonic() - t)))
        found[f"node{i}"] = {"readiness_ms": first, "before": dict(before), "later_not_200": dict(later)}
    run_threads(watch, [(0,), (1,)])
    cluster.procs[2].send_signal(signal.SIGCONT)
    for i in (0, 1):
        f = results.setdefault("frozen", {})[f"node{i}"] = found[f"node{i}"]
        print(f"frozen: node {i} readiness 200 at {f['readiness_ms']} ms after node 2 froze (before: {f['before']}); "
              f"{sum(f['later_not_200'].values())} later polls answered otherwise {f['later_not_200']}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jar", required=True)
    parser.add_argument("--rounds", type=int, default=3, help="readmission rounds (default 3)")
    parser.add_argument("--writers", type=int, default=8, help="rolling: writer threads (default 8)")
    parser.add_argument("--seconds-per-node", type=float, default=5,
                        help="rolling: seconds of writes before the first restart and after the last (default 5)")
    parser.add_argument("--only", choices=["readmission", "rolling", "frozen"])
    args = parser.parse_args()
    args.jar = os.path.abspath(args.jar)
    if not os.path.isfile(args.jar):
        parser.error(f"no jar at {args.jar}")
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # as Ctrl-C: the finally stops the nodes
    workdir = tempfile.mkdtemp(prefix="ringkv-restarts-")
    print(f"jar {args.jar}, data and logs in {workdir}", flush=True)
    finished = False
    try:
        for name, part in [("readmission", readmission), ("rolling", rolling), ("frozen", frozen)]:
            if args.only in (None, name):
                cluster = Cluster(args.jar, workdir, name)
                try:
                    part(args, cluster)
                finally:
                    for i in range(3):
                        cluster.stop(i)
        finished = True
    finally:
        print(json.dumps({"jar": args.jar, **results}), flush=True)
        if finished:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print(f"stopped early: data and node logs kept in {workdir}", file=sys.stderr)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
