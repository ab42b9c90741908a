// ringkv (or etcd: STORE=etcd) load: one of the scenarios put | get | mixed | range (SCENARIO), offered at a fixed
// rate (EXECUTOR=constant, the default) or along a ramp (EXECUTOR=ramping), open model: requests
// start on schedule whether or not earlier ones have answered.
//   k6 run -e SCENARIO=get -e RATE=1000 -e DURATION=30s -e REPLICAS=2/3 loadtest/kv.js
// get, mixed and range expect a filled store: run loadtest/fill.js first (loadtest/run.sh does).
import http from 'k6/http';
import { check } from 'k6';
import {
  cfg, key, pickIndex, rangeUrl, putKey, getKey, deleteKey, OK_STATUS, authHeaders,
  executor, thresholds, commonOptions, summaryHandler,
} from './lib.js';

const OPS = {
  put: ['put'],
  get: ['get'],
  mixed: cfg.deleteRatio > 0 ? ['get', 'put', 'delete'] : ['get', 'put'],
  range: ['range'],
};
if (!OPS[cfg.scenario]) throw new Error(`SCENARIO must be one of ${Object.keys(OPS).join(', ')}, got "${cfg.scenario}"`);
if (cfg.scenario === 'range' && cfg.store !== 'ringkv') throw new Error('the range scenario is for ringkv only');

export const options = {
  ...commonOptions,
  scenarios: { [cfg.scenario]: { ...executor(), exec: cfg.scenario } },
  thresholds: thresholds(OPS[cfg.scenario]),
};

function doPut() {
  const res = putKey(key(pickIndex()));
  check(res, { [`PUT ${OK_STATUS.put}`]: (r) => r.status === OK_STATUS.put });
}

function doGet() {
  const res = getKey(key(pickIndex()));
  if (cfg.allowMissing) {
    check(res, { 'GET 200 or 404': (r) => r.status === 200 || r.status === 404 });
  } else {
    check(res, { 'GET 200': (r) => r.status === 200 });
  }
}

function doDelete() {
  const res = deleteKey(key(pickIndex()));
  check(res, { [`DELETE ${OK_STATUS.delete}`]: (r) => r.status === OK_STATUS.delete });
}

export function put() {
  doPut();
}

export function get() {
  doGet();
}

export function mixed() {
  const u = Math.random();
  if (u < cfg.readRatio) doGet();
  else if (u < cfg.readRatio + cfg.deleteRatio) doDelete();
  else doPut();
}

// Each record in the answer is "<key>\n<value>"; on a filled store every window is full.
const recordBytes = key(0).length + 1 + cfg.valueSize;
const rangeParams = {
  headers: authHeaders,
  tags: { op: 'range' },
  // The body is needed to tell a complete range from one cut off mid-stream.
  responseType: 'binary',
  timeout: cfg.timeout,
};

export function range() {
  const n = Math.min(cfg.rangeSize, cfg.keyspace);
  // The window's first key follows the distribution, so zipf makes the low keys' windows hot.
  const start = pickIndex(cfg.keyspace - n + 1);
  const res = http.get(rangeUrl(key(start), key(start + n)), rangeParams);
  const checks = { 'range 200': (r) => r.status === 200 };
  if (!cfg.allowMissing) {
    checks[`range has ${n} records`] = (r) => r.body !== null && r.body.byteLength === n * recordBytes;
  }
  check(res, checks);
}

const replicasLabel = cfg.replicas === '' ? 'default' : cfg.replicas;
const load = cfg.executor === 'ramping'
  ? `ramping ${cfg.stages || `${cfg.rateStart}->${cfg.rate}/s over ${cfg.duration}`}`
  : `${cfg.rate}/s for ${cfg.duration}`;
export const handleSummary = summaryHandler(
  `ringkv ${cfg.scenario}, replicas ${replicasLabel}, ${load}, keyspace ${cfg.keyspace} (${cfg.distribution}), values ${cfg.valueSize} B`,
);
