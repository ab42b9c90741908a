// Fills the store: PUTs every key of the key space (KEYSPACE, default 100000) once, with values
// of VALUE_SIZE bytes, as fast as FILL_VUS (default 32) concurrent clients go. Logs every 10%.
//   k6 run -e KEYSPACE=100000 loadtest/fill.js
// A PUT that fails (503 under overload, 504) is retried up to FILL_RETRIES (10) times with
// backoff; the run fails if any key could not be written, since GETs would then see 404s.
import exec from 'k6/execution';
import { check, sleep } from 'k6';
import { cfg, key, putKey, OK_STATUS, statusCounts, summaryHandler } from './lib.js';

const fillVus = Math.max(1, Math.min(Number(__ENV.FILL_VUS || 32), cfg.keyspace));
const RETRIES = Number(__ENV.FILL_RETRIES || 10);
const step = Math.max(1, Math.ceil(cfg.keyspace / 10));

export const options = {
  discardResponseBodies: true,
  summaryTrendStats: ['avg', 'min', 'med', 'p(90)', 'p(99)', 'max'],
  systemTags: ['status', 'method', 'expected_response', 'scenario', 'check', 'error_code'],
  scenarios: {
    fill: {
      executor: 'shared-iterations',
      vus: fillVus,
      iterations: cfg.keyspace,
      maxDuration: __ENV.FILL_MAX_DURATION || '30m',
    },
  },
  thresholds: { checks: ['rate==1'], ...statusCounts() },
};

export function setup() {
  console.log(`fill: ${cfg.keyspace} keys of ${cfg.valueSize} B over ${cfg.nodes.join(' ')} with ${fillVus} VUs`);
  return { t0: Date.now() };
}

export default function (data) {
  const i = exec.scenario.iterationInTest; // 0 .. KEYSPACE-1, each exactly once
  let res;
  for (let attempt = 0; attempt <= RETRIES; attempt++) {
    res = putKey(key(i));
    if (res.status === OK_STATUS.put) break;
    sleep(Math.min(0.05 * Math.pow(2, attempt), 2)); // 50 ms, 100 ms, ... at most 2 s
  }
  check(res, { [`PUT ${OK_STATUS.put}`]: (r) => r.status === OK_STATUS.put });
  const done = i + 1;
  if (done % step === 0 || done === cfg.keyspace) {
    const secs = (Date.now() - data.t0) / 1000;
    console.log(`fill: ${Math.round((100 * done) / cfg.keyspace)}% (${done}/${cfg.keyspace} keys started, ${secs.toFixed(1)}s, ${(done / secs).toFixed(0)} keys/s)`);
  }
}

export const handleSummary = summaryHandler(`ringkv fill: ${cfg.keyspace} keys of ${cfg.valueSize} B`, 'fill');
