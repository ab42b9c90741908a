"""A stand-in for the nodes' /actuator/backup, /actuator/restore and /v0/status, for running the chart's
backup and restore scripts (files/backup.js, files/restore.js) with k6 (helm/verify.sh). One server plays
every node: a request's first path segment names the node (NODES=http://127.0.0.1:PORT/n0,.../n1), and a
node whose name starts with "down" answers 503 to everything. /actuator/* needs
`Authorization: Bearer mock-token` (else 401), /v0/status nothing. Every request is appended to LOG_FILE
as a JSON line {"node", "method", "path", "body"}, for the checks to see what the script asked of whom.

  mock_actuator.py MODE PORT_FILE LOG_FILE     listens on a free port and writes it to PORT_FILE

Backup modes (POST begins backup ID, GET /actuator/backup lists it beside an older complete one):
  backup-ok          202 with nobody refused; the backup is complete from the third GET on
  backup-refused     202, but one member refused: the backup stays incomplete
  backup-stuck       202 with nobody refused; never complete
  backup-own-failed  202 with nobody refused; the asked node's own snapshot then fails
  backup-none        409: no backup store is configured, on every node
Restore modes (GET /actuator/restore answers download, stream, then the end of each restore; each node's
/v0/status answers 503 to its first two requests, then 200):
  restore-ok         202; done
  restore-under-way  409 "a restore of ID is under way"; that restore is done
  restore-retry      202; the first restore ends failed, the second done
  restore-failing    202; every restore ends failed
  restore-lost       202; the first is lost (GET answers an empty body, as after a restart), the second done
  restore-refused    400: the backup is incomplete
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from threading import Lock
from urllib.parse import urlparse

mode, port_file, log_file = sys.argv[1], sys.argv[2], sys.argv[3]
ID = "2026-11-29T16-31-05Z"
OLDER = {"id": "2026-11-28T02-00-00Z", "complete": True, "members": ["a", "b", "c"], "missing": []}
lock = Lock()
state = {"backup_gets": 0, "restores": 0, "restore_gets": 0, "status": {}}


def progress(job, phase, records, error=None):
    return {"job": job, "phase": phase, "startedMillis": 1, "finishedMillis": 2 if phase in ("done", "failed") else 0,
            "filesTotal": 4, "filesDone": 2, "filesSkipped": 0, "bytesTotal": 4096, "bytesDone": 2048,
            "records": records, "error": error}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def send(self, code, body=None):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(code)
        if data:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def handle_any(self, method):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        parts = urlparse(self.path).path.split("/", 2)
        node, path = parts[1], "/" + (parts[2] if len(parts) > 2 else "")
        with lock:
            with open(log_file, "a") as f:
                f.write(json.dumps({"node": node, "method": method, "path": path, "body": body}) + "\n")
            if node.startswith("down"):
                return self.send(503, {"reason": "node down"})
            if path == "/v0/status":
                seen = state["status"][node] = state["status"].get(node, 0) + 1
                return self.send(503 if seen <= 2 else 200, {"status": "UP"})
            if self.headers.get("Authorization") != "Bearer mock-token":
                return self.send(401)
            if path == "/actuator/backup":
                return self.backup(method)
            if path == "/actuator/restore":
                return self.restore(method, body)
            return self.send(404)

    def backup(self, method):
        if mode == "backup-none":
            return self.send(409, {"reason": "no backup store is configured on this node (ringkv.backup.target)"})
        if method == "POST":
            refused = {"https://c:8080": "still uploading backup 2026-11-28T02-00-00Z"} if mode == "backup-refused" else {}
            return self.send(202, {"id": ID, "members": ["a", "b", "c"], "refused": refused})
        state["backup_gets"] += 1
        complete = mode == "backup-ok" and state["backup_gets"] >= 3
        this = progress(ID, "failed" if mode == "backup-own-failed" else "upload", 10,
                        "upload failed: 403" if mode == "backup-own-failed" else None)
        entry = {"id": ID, "complete": complete, "members": ["a", "b", "c"], "missing": [] if complete else ["c"]}
        return self.send(200, {"store": "s3://mock", "keep": 7, "lastCompleteMillis": 1, "thisNode": this,
                               "backups": [OLDER, entry]})

    def restore(self, method, body):
        if method == "POST":
            if mode == "restore-refused":
                return self.send(400, {"reason": "backup %s is incomplete: no snapshot of [c]" % ID})
            wanted = json.loads(body or "{}").get("from")
            if mode == "restore-under-way":
                return self.send(409, {"reason": "a restore of %s is under way on this node" % wanted})
            state["restores"] += 1
            state["restore_gets"] = 0
            return self.send(202, progress(wanted, "download", 0))
        if mode == "restore-under-way" and state["restores"] == 0:
            state["restores"] = 1
        if state["restores"] == 0:
            return self.send(200)
        state["restore_gets"] += 1
        n, run = state["restore_gets"], state["restores"]
        if mode == "restore-lost" and run == 1 and n >= 2:
            return self.send(200)
        if n == 1:
            return self.send(200, progress(ID, "download", 0))
        if n == 2:
            return self.send(200, progress(ID, "stream", 1000))
        fails = mode == "restore-failing" or (mode == "restore-retry" and run == 1)
        return self.send(200, progress(ID, "failed", 1500, "member c did not answer") if fails
                         else progress(ID, "done", 2000))

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file, "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
