// Shared configuration, keys, values, URLs and the summary for the ringkv k6 scripts.
// Every setting comes from the environment (k6 run -e NAME=value, or exported variables);
// README-style documentation of each one is in loadtest/BENCHMARKS.md.
import http from 'k6/http';
import encoding from 'k6/encoding';
import { randomBytes } from 'k6/crypto';

function env(name, fallback) {
  const v = __ENV[name];
  return v === undefined || v === '' ? fallback : v;
}

function intEnv(name, fallback) {
  const raw = env(name, undefined);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return Math.floor(n);
}

function floatEnv(name, fallback) {
  const raw = env(name, undefined);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new Error(`${name} must be a number, got "${raw}"`);
  return n;
}

const LOCAL_CLUSTER = 'http://127.0.0.1:8080,http://127.0.0.1:8081,http://127.0.0.1:8082';

function nodeList() {
  // NODES wins; then BASE_URL (a single node); neither: the local three-node cluster (bin/cluster).
  const raw = env('NODES', env('BASE_URL', LOCAL_CLUSTER));
  const nodes = raw.split(',').map((s) => s.trim().replace(/\/+$/, '')).filter((s) => s !== '');
  if (nodes.length === 0) throw new Error('NODES / BASE_URL is empty');
  return nodes;
}

const scenario = env('SCENARIO', 'mixed');
// YCSB's core workloads (kv.js): zipf by default, as YCSB's requestdistribution=zipfian.
const ycsb = scenario.startsWith('ycsb-');
// The scenarios that scan: their p99 covers whole windows of records, not one key.
const scans = scenario === 'range' || scenario === 'ycsb-e';
const rate = intEnv('RATE', 200);
// Enough VUs for 100 ms worth of requests in flight at the highest rate offered (at least 100).
const peakRate = Math.max(rate, ...env('STAGES', '').split(',').map((p) => Number(p.split(':')[1]) || 0));
const vus = intEnv('VUS', Math.max(100, Math.ceil(peakRate / 10)));
const deleteRatio = floatEnv('DELETE_RATIO', 0);
const filled = env('FILLED', '1') !== '0';

export const cfg = {
  scenario,
  // ringkv, or etcd (3.4's JSON gateway: the store a user would pick instead, under the same load)
  store: env('STORE', 'ringkv'),
  nodes: nodeList(),
  executor: env('EXECUTOR', 'constant'), // constant | ramping
  rate, // requests (iterations) per second offered
  rateStart: intEnv('RATE_START', 0), // ramping: the rate the ramp starts from
  stages: env('STAGES', ''), // ramping: "30s:500,1m:2000,30s:2000" (duration:target rate)
  duration: env('DURATION', '30s'),
  vus, // preAllocatedVUs
  maxVUs: Math.max(intEnv('MAX_VUS', vus), vus),
  keyspace: Math.max(intEnv('KEYSPACE', 100000), 1),
  distribution: env('DISTRIBUTION', ycsb ? 'zipf' : 'uniform'), // uniform | zipf
  zipfTheta: floatEnv('ZIPF_THETA', 0.99), // YCSB's default skew
  valueSize: intEnv('VALUE_SIZE', 1024),
  replicas: env('REPLICAS', ''), // '' = the node's default (majority of all), or "ack/from"
  readRatio: floatEnv('READ_RATIO', 0.5), // mixed: share of GETs (YCSB workload A: 0.5)
  deleteRatio, // mixed: share of DELETEs (default none)
  rangeSize: Math.max(intEnv('RANGE_SIZE', 10), 1), // range: keys per window
  scanMax: intEnv('SCAN_MAX', 100), // ycsb-e: a scan asks for 1..SCAN_MAX records (YCSB's maxscanlength)
  timeout: env('TIMEOUT', '10s'), // per request; a request past it counts as failed (status 0)
  // A GET of a key may answer 404 only when the store was not filled or deletes run.
  allowMissing: !filled || deleteRatio > 0,
  filled,
  p99Ms: floatEnv('P99_MS', scans ? 50 : 10),
  maxErrorRate: floatEnv('MAX_ERROR_RATE', 0.01),
};

if (!['ringkv', 'etcd'].includes(cfg.store)) {
  throw new Error(`STORE must be ringkv or etcd, got "${cfg.store}"`);
}
if (cfg.store === 'etcd' && cfg.replicas !== '') {
  throw new Error('REPLICAS is for ringkv: etcd replicates every write to a majority through Raft');
}
if (!['uniform', 'zipf'].includes(cfg.distribution)) {
  throw new Error(`DISTRIBUTION must be uniform or zipf, got "${cfg.distribution}"`);
}
if (cfg.scanMax < 1) {
  throw new Error(`SCAN_MAX must be at least 1 (records a scan asks for at most), got "${cfg.scanMax}"`);
}
if (cfg.replicas !== '' && !/^\d+\/\d+$/.test(cfg.replicas)) {
  throw new Error(`REPLICAS must look like 2/3, got "${cfg.replicas}"`);
}

// ---- keys ------------------------------------------------------------------------------------

// Fixed width, so byte order is numeric order and a range window [key(i), key(i+n)) holds n keys.
export function key(i) {
  return 'k' + String(i).padStart(10, '0');
}

// A cheap Zipfian sampler (Gray et al., "Quickly generating billion-record synthetic databases",
// as in YCSB): O(1) per sample after computing zeta(n, theta) once, which is approximated with
// Euler-Maclaurin past the first 1000 terms so that start-up stays cheap for any key space.
// Rank 0 (key k0000000000) is the hottest key; the ring's hash spreads the hot keys over nodes.
function zeta(n, theta) {
  const m = Math.min(n, 1000);
  let sum = 0;
  for (let i = 1; i <= m; i++) sum += Math.pow(i, -theta);
  if (n > m) {
    sum += (Math.pow(n, 1 - theta) - Math.pow(m, 1 - theta)) / (1 - theta)
      + (Math.pow(n, -theta) - Math.pow(m, -theta)) / 2
      - (theta / 12) * (Math.pow(n, -theta - 1) - Math.pow(m, -theta - 1));
  }
  return sum;
}

function zipfSampler(n, theta) {
  if (theta <= 0 || theta === 1) throw new Error('ZIPF_THETA must be > 0 and != 1');
  if (n < 2) return () => 0;
  const zetan = zeta(n, theta);
  const zeta2 = 1 + Math.pow(0.5, theta);
  const alpha = 1 / (1 - theta);
  const eta = (1 - Math.pow(2 / n, 1 - theta)) / (1 - zeta2 / zetan);
  const half = Math.pow(0.5, theta);
  return () => {
    const u = Math.random();
    const uz = u * zetan;
    if (uz < 1) return 0;
    if (uz < 1 + half) return 1;
    return Math.min(n - 1, Math.floor(n * Math.pow(eta * u - eta + 1, alpha)));
  };
}

const uniform = (n) => () => Math.floor(Math.random() * n);

// Picks a key index in [0, n).
export const pickIndex = (function () {
  const samplers = {};
  return function (n) {
    n = n === undefined ? cfg.keyspace : n;
    let s = samplers[n];
    if (!s) {
      s = cfg.distribution === 'zipf' ? zipfSampler(n, cfg.zipfTheta) : uniform(n);
      samplers[n] = s;
    }
    return s();
  };
})();

// ---- values and URLs -------------------------------------------------------------------------

// Random bytes, generated once per VU (this module is evaluated once in each VU's init context).
export const value = randomBytes(cfg.valueSize);

let next = Math.floor(Math.random() * cfg.nodes.length);
export function node() {
  // Round robin from a random start, so the VUs spread evenly over the nodes.
  next = (next + 1) % cfg.nodes.length;
  return cfg.nodes[next];
}

const replicasParam = cfg.replicas === '' ? '' : `&replicas=${cfg.replicas}`;

export function entityUrl(id) {
  return `${node()}/v0/entity?id=${id}${replicasParam}`;
}

// RINGKV_TOKEN: a token of role write (or admin) for a store with security on (the chart's Job
// takes it from the release's Secret, loadtest/run.sh's cluster-secure makes one); unset for a
// store without security (bin/cluster).
const token = env('RINGKV_TOKEN', '');
export const authHeaders = token === '' ? {} : { Authorization: `Bearer ${token}` };

export const putParams = {
  headers: Object.assign({ 'Content-Type': 'application/octet-stream' }, authHeaders),
  tags: { op: 'put' },
  responseType: 'none',
  timeout: cfg.timeout,
};

export const getParams = {
  headers: authHeaders,
  tags: { op: 'get' },
  responseType: 'none',
  timeout: cfg.timeout,
  // 404 is an answer, not a failure, where keys may be missing (no fill, or deletes running).
  responseCallback: cfg.allowMissing
    ? http.expectedStatuses({ min: 200, max: 299 }, 404)
    : http.expectedStatuses({ min: 200, max: 299 }),
};

export const deleteParams = {
  headers: authHeaders, tags: { op: 'delete' }, responseType: 'none', timeout: cfg.timeout,
};

const rangeParams = {
  headers: authHeaders,
  tags: { op: 'range' },
  // The body is needed to count the records, which tells a complete range from one cut off mid-stream.
  responseType: 'binary',
  timeout: cfg.timeout,
};

// ---- one request of each kind, for either store ----------------------------------------------

// etcd's gateway takes JSON with base64 keys and values; its reads are linearizable by default
// (a quorum read through the leader), its writes go through Raft with an fsync on each member.
// ETCD_TOKEN: the token of an etcd with auth on (loadtest/run.sh's etcd-secure), which its gateway
// takes as the Authorization header, bare.
const etcdToken = env('ETCD_TOKEN', '');
const etcdJson = Object.assign({ 'Content-Type': 'application/json' },
  etcdToken === '' ? {} : { Authorization: etcdToken });
const value64 = encoding.b64encode(value);
const etcdParams = (params) => Object.assign({}, params, { headers: etcdJson });
const etcdGetParams = etcdParams(getParams);
const etcdPutParams = etcdParams(putParams);
const etcdDeleteParams = etcdParams(deleteParams);
const etcdRangeParams = Object.assign(etcdParams(rangeParams), { responseType: 'text' }); // JSON

export function putKey(id) {
  if (cfg.store === 'etcd') {
    const body = `{"key":"${encoding.b64encode(id)}","value":"${value64}"}`;
    return http.post(`${node()}/v3/kv/put`, body, etcdPutParams);
  }
  return http.put(entityUrl(id), value, putParams);
}

export function getKey(id) {
  if (cfg.store === 'etcd') {
    return http.post(`${node()}/v3/kv/range`, `{"key":"${encoding.b64encode(id)}"}`, etcdGetParams);
  }
  return http.get(entityUrl(id), getParams);
}

export function deleteKey(id) {
  if (cfg.store === 'etcd') {
    return http.post(`${node()}/v3/kv/deleterange`, `{"key":"${encoding.b64encode(id)}"}`, etcdDeleteParams);
  }
  return http.del(entityUrl(id), null, deleteParams);
}

// The records of keys start .. end-1: ringkv's GET /v0/entities, etcd's range with range_end and,
// as a YCSB scan asks for "this many records from this key", a limit.
export function rangeKeys(start, end) {
  if (cfg.store === 'etcd') {
    const body = `{"key":"${encoding.b64encode(key(start))}","range_end":"${encoding.b64encode(key(end))}","limit":${end - start}}`;
    return http.post(`${node()}/v3/kv/range`, body, etcdRangeParams);
  }
  return http.get(`${node()}/v0/entities?start=${key(start)}&end=${key(end)}`, rangeParams);
}

// Each record in ringkv's answer is "<key>\n<value>", every value VALUE_SIZE bytes as the fill
// wrote them; a count that is not whole means a record was cut off.
const recordBytes = key(0).length + 1 + cfg.valueSize;

// How many records a 200 answer of rangeKeys holds (-1 for any other answer).
export function rangeRecords(res) {
  if (res.status !== 200 || res.body === null) return -1;
  if (cfg.store === 'etcd') return (JSON.parse(res.body).kvs || []).length;
  return res.body.byteLength / recordBytes;
}

// What each store answers on success: etcd's gateway answers 200 to everything that worked.
export const OK_STATUS = cfg.store === 'etcd'
  ? { put: 200, get: 200, delete: 200 }
  : { put: 201, get: 200, delete: 202 };

// ---- executors, thresholds ---------------------------------------------------------------------

function parseStages(spec) {
  return spec.split(',').map((part) => {
    const [duration, target] = part.split(':').map((s) => s.trim());
    if (!duration || target === undefined || !Number.isFinite(Number(target))) {
      throw new Error(`STAGES must look like "30s:500,1m:2000", got "${spec}"`);
    }
    return { duration, target: Number(target) };
  });
}

export function executor() {
  if (cfg.executor === 'constant') {
    return {
      executor: 'constant-arrival-rate',
      rate: cfg.rate,
      timeUnit: '1s',
      duration: cfg.duration,
      preAllocatedVUs: cfg.vus,
      maxVUs: cfg.maxVUs,
    };
  }
  if (cfg.executor === 'ramping') {
    return {
      executor: 'ramping-arrival-rate',
      startRate: cfg.rateStart,
      timeUnit: '1s',
      // Default: one linear ramp from RATE_START to RATE over DURATION.
      stages: cfg.stages ? parseStages(cfg.stages) : [{ duration: cfg.duration, target: cfg.rate }],
      preAllocatedVUs: cfg.vus,
      maxVUs: cfg.maxVUs,
    };
  }
  throw new Error(`EXECUTOR must be constant or ramping, got "${cfg.executor}"`);
}

export const COUNTED_STATUSES = [200, 201, 202, 400, 404, 413, 500, 503, 504, 0];

export function thresholds(ops) {
  // MAX_ERROR_RATE=0: not one request may fail ("rate<0" could never pass).
  const t = {
    http_req_failed: [cfg.maxErrorRate > 0 ? `rate<${cfg.maxErrorRate}` : 'rate==0'],
    http_req_duration: [`p(99)<${cfg.p99Ms}`],
    checks: [cfg.maxErrorRate > 0 ? `rate>${1 - cfg.maxErrorRate}` : 'rate==1'],
  };
  // Per-operation sub-metrics, so the summary shows each operation's latency in a mixed run.
  if (ops.length > 1) {
    for (const op of ops) t[`http_req_duration{op:${op}}`] = [`p(99)<${cfg.p99Ms}`];
  }
  return Object.assign(t, statusCounts());
}

// Counts per status (thresholds that always pass): the summary then tells 503 (overload) from
// 504 (not enough replicas) from 0 (no answer: refused, reset, or past TIMEOUT).
export function statusCounts() {
  const t = {};
  for (const status of COUNTED_STATUSES) t[`http_reqs{status:${status}}`] = ['count>=0'];
  return t;
}

export const commonOptions = {
  discardResponseBodies: true,
  summaryTrendStats: ['avg', 'min', 'med', 'p(90)', 'p(95)', 'p(99)', 'p(99.9)', 'max'],
  // No url/name tags: one time series per key would grow k6's memory without bound.
  // group: k6 fills the summary's per-check counts (root_group.checks) only with it.
  systemTags: ['status', 'method', 'expected_response', 'scenario', 'group', 'check', 'error_code'],
  // Each iteration is one request: keep connections alive and reuse them.
  noConnectionReuse: false,
};

// ---- summary ---------------------------------------------------------------------------------

function fmtMs(v) {
  if (v === undefined || v === null) return '-';
  return v >= 1000 ? `${(v / 1000).toFixed(2)}s` : `${v.toFixed(2)}ms`;
}

// A compact text summary on stdout. k6 1.x offers no importable textSummary (it is on
// jslib.k6.io, out of reach offline) and prints its own only when handleSummary returns nothing.
export function textSummary(data, title) {
  const lines = [];
  const m = data.metrics;
  const secs = (data.state && data.state.testRunDurationMs ? data.state.testRunDurationMs : 0) / 1000;
  lines.push('', `  ${title}`, `  nodes: ${cfg.nodes.join(' ')}   run: ${secs.toFixed(1)}s`, '');
  const names = Object.keys(m).sort();
  for (const name of names) {
    const met = m[name];
    const v = met.values;
    let text;
    if (met.type === 'trend') {
      const unitMs = met.contains === 'time';
      const f = unitMs ? fmtMs : (x) => (x === undefined ? '-' : x.toFixed(2));
      text = ['avg', 'min', 'med', 'p(90)', 'p(99)', 'p(99.9)', 'max']
        .filter((k) => k in v).map((k) => `${k}=${f(v[k])}`).join(' ');
    } else if (met.type === 'rate') {
      text = `${(v.rate * 100).toFixed(2)}%  ${v.passes} of ${v.passes + v.fails}`;
    } else if (met.type === 'counter') {
      text = `${v.count}  ${v.rate.toFixed(1)}/s`;
    } else {
      text = `value=${v.value} min=${v.min} max=${v.max}`;
    }
    let th = '';
    if (met.thresholds) {
      th = Object.entries(met.thresholds).filter(([k]) => k !== 'count>=0')
        .map(([k, r]) => `${r.ok ? 'ok' : 'FAILED'}: ${k}`).join(', ');
      th = th ? `   [${th}]` : '';
    }
    if (name.startsWith('http_reqs{status:') && v.count === 0) continue;
    lines.push(`  ${(name + ' ').padEnd(38, '.')} ${text}${th}`);
  }
  const checks = (data.root_group && data.root_group.checks) || [];
  if (checks.length) {
    lines.push('', '  checks:');
    for (const c of checks) lines.push(`    ${c.fails === 0 ? 'ok    ' : 'FAILED'} ${c.name}: ${c.passes} passed, ${c.fails} failed`);
  }
  return lines.join('\n') + '\n\n';
}

// handleSummary for a script: the text summary on stdout, the whole summary data (plus the
// settings) as JSON to SUMMARY_JSON, by default loadtest/results/summary-<name>.json (none: no file).
export function summaryHandler(title, name) {
  const path = env('SUMMARY_JSON', `loadtest/results/summary-${name || cfg.scenario}.json`);
  return function handleSummary(data) {
    data.ringkv = { config: cfg, title };
    const out = { stdout: textSummary(data, title) };
    // "none": stdout only, for a read-only container (the chart's Job) or when no file is wanted.
    if (path !== 'none') out[path] = JSON.stringify(data, null, 2);
    return out;
  };
}
