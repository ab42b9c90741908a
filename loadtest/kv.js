// ringkv (or etcd: STORE=etcd) load: one of the scenarios put | get | mixed | range or YCSB's core
// workloads ycsb-a | ycsb-b | ycsb-c | ycsb-e (SCENARIO), offered at a fixed rate
// (EXECUTOR=constant, the default) or along a ramp (EXECUTOR=ramping), open model: requests
// start on schedule whether or not earlier ones have answered.
//   k6 run -e SCENARIO=get -e RATE=1000 -e DURATION=30s -e REPLICAS=2/3 loadtest/kv.js
// All but put expect a filled store: run loadtest/fill.js first (loadtest/run.sh does).
import exec from 'k6/execution';
import { check } from 'k6';
import {
  cfg, key, pickIndex, putKey, getKey, deleteKey, rangeKeys, rangeRecords, OK_STATUS,
  executor, thresholds, commonOptions, summaryHandler,
} from './lib.js';

// index: a key of the loaded key space, picked by the distribution, unless given.
function doPut(index = pickIndex()) {
  const res = putKey(key(index));
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

// The keys start .. end-1, all below KEYSPACE: on a filled store every one of them is there.
function doRange(start, end) {
  const res = rangeKeys(start, end);
  const checks = { 'range 200': (r) => r.status === 200 };
  if (!cfg.allowMissing) checks['range has every key of its window'] = (r) => rangeRecords(r) === end - start;
  check(res, checks);
}

// range: a window of RANGE_SIZE keys whose first key follows the distribution, so zipf makes the
// low keys' windows hot.
function fixedRange() {
  const n = Math.min(cfg.rangeSize, cfg.keyspace);
  const start = pickIndex(cfg.keyspace - n + 1);
  doRange(start, start + n);
}

// ycsb-e's scan: 1..SCAN_MAX records (uniform, as YCSB's scanlengthdistribution) from a key picked
// as reads pick theirs; cut at KEYSPACE, so it never meets the keys inserted meanwhile.
function ycsbScan() {
  const start = pickIndex();
  const length = 1 + Math.floor(Math.random() * cfg.scanMax);
  doRange(start, Math.min(start + length, cfg.keyspace));
}

// ycsb-e's insert: a key nobody wrote before (in this run). VU v (1..maxVUs) takes
// KEYSPACE + (v-1), then + maxVUs, + 2*maxVUs, ...: a slice of its own above the loaded keys.
let insertsByThisVu = 0;
function ycsbInsert() {
  doPut(cfg.keyspace + (exec.vu.idInTest - 1) + insertsByThisVu * cfg.maxVUs);
  insertsByThisVu++;
}

// Runs the first operation whose share the draw falls in, otherwise the last:
// oneOf([[0.9, doGet]], doPut) is 90 % GETs and 10 % PUTs.
function oneOf(shares, otherwise) {
  let u = Math.random();
  for (const [share, op] of shares) {
    if (u < share) return op();
    u -= share;
  }
  return otherwise();
}

// Each scenario: its operations, as tagged op=... (each gets a p99 threshold in a mix; a YCSB read
// is a get, an update a put, a scan a range, an insert a put), and one iteration of it.
const SCENARIOS = {
  put: { ops: ['put'], iteration: doPut },
  get: { ops: ['get'], iteration: doGet },
  mixed: {
    ops: cfg.deleteRatio > 0 ? ['get', 'put', 'delete'] : ['get', 'put'],
    iteration: () => oneOf([[cfg.readRatio, doGet], [cfg.deleteRatio, doDelete]], doPut),
  },
  range: { ops: ['range'], iteration: fixedRange },
  // YCSB's core workloads (its workloads/workloada, b, c, e), over the filled key space:
  'ycsb-a': { ops: ['get', 'put'], iteration: () => oneOf([[0.5, doGet]], doPut) }, // update heavy
  'ycsb-b': { ops: ['get', 'put'], iteration: () => oneOf([[0.95, doGet]], doPut) }, // read mostly
  'ycsb-c': { ops: ['get'], iteration: doGet }, // read only
  'ycsb-e': { ops: ['range', 'put'], iteration: () => oneOf([[0.95, ycsbScan]], ycsbInsert) }, // short ranges
};
const scenario = SCENARIOS[cfg.scenario];
if (!scenario) throw new Error(`SCENARIO must be one of ${Object.keys(SCENARIOS).join(', ')}, got "${cfg.scenario}"`);

export const options = {
  ...commonOptions,
  scenarios: { [cfg.scenario]: { ...executor(), exec: 'iteration' } },
  thresholds: thresholds(scenario.ops),
};

export function iteration() {
  scenario.iteration();
}

const replicasLabel = cfg.replicas === '' ? 'default' : cfg.replicas;
const load = cfg.executor === 'ramping'
  ? `ramping ${cfg.stages || `${cfg.rateStart}->${cfg.rate}/s over ${cfg.duration}`}`
  : `${cfg.rate}/s for ${cfg.duration}`;
export const handleSummary = summaryHandler(
  `ringkv ${cfg.scenario}, replicas ${replicasLabel}, ${load}, keyspace ${cfg.keyspace} (${cfg.distribution}), values ${cfg.valueSize} B`,
);
