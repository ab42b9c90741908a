// The restore Job (templates/restore-job.yaml): waits until every node answers GET /v0/status 200,
// then asks node 0 to restore backup FROM (POST /actuator/restore {"from", "asOf"} on its
// management port) and follows that restore on node 0, the only node that knows it
// (GET /actuator/restore), logging its progress at every poll, until its phase is `done`. A 202
// begins it; a 409 that says one is under way is followed as it is. A restore that ends `failed`,
// or that node 0 no longer knows (it restarted), is asked for again, up to ATTEMPTS times: a
// restore is idempotent and resumes. It exits non-zero (108, exec.test.abort), failing the Job's
// pod, when the backup is refused (400: missing or incomplete; 409: no backup store), after ATTEMPTS
// failed restores, or after DEADLINE_SECONDS. While the restore runs, the cluster serves what has
// arrived: a key not streamed yet answers 404.
// STATUS_URLS: every node's client URL, comma-separated; MANAGEMENT_URL: node 0's management URL;
// FROM: the backup id; AS_OF: an ISO-8601 instant, or empty; ATTEMPTS (3); RINGKV_TOKEN: a token of
// role admin, or empty (security off); SSL_CERT_FILE (read by k6 itself): the nodes' CA;
// DEADLINE_SECONDS (7200); POLL_SECONDS (10: the longest pause between two polls, which begin 1 s
// apart and double).
import http from 'k6/http';
import { sleep } from 'k6';
import { answer, fail, growingPauses, headers, json, urls } from './actuator-client.js';

const statusUrls = urls(__ENV.STATUS_URLS);
const management = __ENV.MANAGEMENT_URL || '';
const from = __ENV.FROM || '';
const asOf = __ENV.AS_OF || '';
const attempts = Number(__ENV.ATTEMPTS || 3);
const deadlineSeconds = Number(__ENV.DEADLINE_SECONDS || 7200);
const pollSeconds = Number(__ENV.POLL_SECONDS || 10);

// One iteration; k6 would end it without an error after maxDuration, so that is kept beyond the
// script's own deadline.
export const options = {
  scenarios: {
    restore: { executor: 'per-vu-iterations', vus: 1, iterations: 1, maxDuration: `${deadlineSeconds + 600}s` },
  },
};

const deadline = Date.now() + deadlineSeconds * 1000;

// Waits the next of nextPause's pauses; fails after DEADLINE_SECONDS.
function pause(what, nextPause) {
  if (Date.now() >= deadline) fail(`${what}: still not there after ${deadlineSeconds}s`);
  sleep(nextPause());
}

function waitForNodes() {
  const nextPause = growingPauses(pollSeconds);
  for (;;) {
    const waiting = statusUrls.filter((url) => http.get(`${url}/v0/status`, { timeout: '10s' }).status !== 200);
    if (!waiting.length) {
      console.log(`all ${statusUrls.length} nodes answer GET /v0/status 200`);
      return;
    }
    console.log(`waiting for ${waiting.join(', ')} (GET /v0/status not 200 yet)`);
    pause(`waiting for ${waiting.join(', ')}`, nextPause);
  }
}

// Asks node 0 to restore; returns null when a restore of FROM runs (begun, or under way already),
// or why not when asking again may help. Fails at once when it cannot.
function begin(attempt) {
  const body = asOf ? { from, asOf } : { from };
  const res = http.post(`${management}/actuator/restore`, JSON.stringify(body),
    { headers: Object.assign({ 'Content-Type': 'application/json' }, headers), timeout: '60s' });
  console.log(`attempt ${attempt}/${attempts}: POST ${management}/actuator/restore ${JSON.stringify(body)} -> ${answer(res)}`);
  const reason = (json(res) || {}).reason || '';
  if (res.status === 202) return null;
  if (res.status === 409 && /under way/.test(reason)) {
    console.log('a restore runs on node 0 already: following it');
    return null;
  }
  if (res.status === 400 || res.status === 409) fail(`restore of ${from} refused: ${answer(res)}`);
  return `POST /actuator/restore -> ${answer(res)}`;
}

// Polls node 0 until the restore ends: returns null when it is done, or why not.
function follow() {
  const nextPause = growingPauses(pollSeconds);
  for (;;) {
    pause(`restore of ${from}`, nextPause);
    const res = http.get(`${management}/actuator/restore`, { headers, timeout: '60s' });
    if (res.status !== 200) {
      console.log(`GET ${management}/actuator/restore -> ${answer(res)}`);
      continue;
    }
    const p = json(res);
    if (!p) return 'node 0 knows no restore: it restarted, and lost it';
    console.log(`restore of ${p.job}: ${p.phase}, ${p.records} records, ${p.filesDone}/${p.filesTotal} files, `
      + `${p.bytesDone}/${p.bytesTotal} bytes${p.error ? `, error: ${p.error}` : ''}`);
    if (p.job !== from) {
      if (p.phase === 'done' || p.phase === 'failed') return `node 0 ran a restore of ${p.job}, not of ${from}`;
    } else if (p.phase === 'done') {
      return null;
    } else if (p.phase === 'failed') {
      return `failed: ${p.error}`;
    }
  }
}

export default function () {
  if (!statusUrls.length || !management || !from) fail('STATUS_URLS, MANAGEMENT_URL and FROM are needed');
  console.log(`restore of backup ${from}${asOf ? ` as of ${asOf}` : ''} through ${management}`);
  waitForNodes();
  let why = '';
  for (let attempt = 1; attempt <= attempts; attempt++) {
    why = begin(attempt);
    if (why === null) why = follow();
    if (why === null) {
      console.log(`restore of ${from} is done`);
      console.log('PASS');
      return;
    }
    console.log(`restore attempt ${attempt}/${attempts} ended: ${why}`);
    if (attempt < attempts) pause(`asking again for the restore of ${from}`, () => pollSeconds);
  }
  fail(`restore of ${from} failed ${attempts} times; the last: ${why}`);
}
