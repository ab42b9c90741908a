// The backup CronJob (templates/backup-cronjob.yaml): asks a node for a backup of the whole cluster
// (POST /actuator/backup on its management port), node 0 first, then node 1, ... until one answers
// 202, so that one node down does not skip the backup; then polls GET /actuator/backup on that same
// node until the store lists the backup complete. It exits non-zero (108, exec.test.abort), failing
// the Job, when no node answers 202, when a member could not take part (`refused` not empty: the
// backup stays incomplete), when the node's own snapshot fails, or when the backup is not complete
// within TIMEOUT_SECONDS: the Job succeeds for a complete backup only.
// NODES: the nodes' management URLs, comma-separated, in order; RINGKV_TOKEN: a token of role admin,
// or empty (security off); SSL_CERT_FILE (read by k6 itself): the nodes' CA; TIMEOUT_SECONDS (900);
// POLL_SECONDS (10: the longest pause between two polls, which begin 1 s apart and double).
import http from 'k6/http';
import { sleep } from 'k6';
import { answer, fail, growingPauses, headers, json, urls } from './actuator-client.js';

const nodes = urls(__ENV.NODES);
const timeoutSeconds = Number(__ENV.TIMEOUT_SECONDS || 900);
const pollSeconds = Number(__ENV.POLL_SECONDS || 10);
// The node asked waits until every member has taken its snapshot (up to a minute each) before it
// answers: a POST that timed out here could still have begun a backup there.
const postTimeout = `${60 * Math.max(nodes.length, 1) + 60}s`;

// One iteration; k6 would end it without an error after maxDuration, so that is kept beyond every
// timeout of the script itself.
export const options = {
  scenarios: {
    backup: {
      executor: 'per-vu-iterations',
      vus: 1,
      iterations: 1,
      maxDuration: `${timeoutSeconds + nodes.length * (60 * nodes.length + 60) + 600}s`,
    },
  },
};

// Asks the nodes in turn; returns [node, answer] of the first that began a backup.
function begin() {
  const tried = [];
  for (const node of nodes) {
    const res = http.post(`${node}/actuator/backup`, null, { headers, timeout: postTimeout });
    console.log(`POST ${node}/actuator/backup -> ${answer(res)}`);
    if (res.status === 202) return [node, json(res) || {}];
    tried.push(`${node}: ${answer(res)}`);
  }
  return fail(`no node began a backup (none answered 202): ${tried.join('; ')}`);
}

export default function () {
  if (!nodes.length) fail('NODES is empty');
  const [node, started] = begin();
  const id = started.id;
  if (!id) fail(`${node} answered 202 without a backup id: ${JSON.stringify(started)}`);
  const refused = started.refused || {};
  if (Object.keys(refused).length) {
    fail(`backup ${id} began without ${Object.keys(refused).join(', ')} (${JSON.stringify(refused)}): it stays incomplete`);
  }
  console.log(`backup ${id} began on ${node}, members ${JSON.stringify(started.members || [])}; waiting until it is complete`);
  const deadline = Date.now() + timeoutSeconds * 1000;
  const nextPause = growingPauses(pollSeconds);
  for (;;) {
    const res = http.get(`${node}/actuator/backup`, { headers, timeout: '60s' });
    const report = res.status === 200 ? json(res) : null;
    const entry = report && (report.backups || []).find((backup) => backup.id === id);
    const own = report && report.thisNode && report.thisNode.job === id ? report.thisNode : null;
    if (entry && entry.complete) {
      console.log(`backup ${id} is complete: ${JSON.stringify(entry)}`);
      console.log('PASS');
      return;
    }
    if (own && own.phase === 'failed') fail(`backup ${id}: the snapshot of ${node} failed: ${own.error}`);
    if (!report) {
      console.log(`GET ${node}/actuator/backup -> ${answer(res)}`);
    } else {
      console.log(`backup ${id}: ${entry ? `missing ${JSON.stringify(entry.missing)}` : 'not listed yet'}`
        + (own ? `; ${node}: ${own.phase}, ${own.filesDone}/${own.filesTotal} files, ${own.bytesDone} bytes` : ''));
    }
    if (Date.now() >= deadline) {
      fail(`backup ${id} is not complete after ${timeoutSeconds}s (backup.timeoutSeconds)`
        + (entry ? `: no snapshot of ${JSON.stringify(entry.missing)} stored` : ''));
    }
    sleep(nextPause());
  }
}
