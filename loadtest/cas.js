// The read-modify-write loop of loadtest/cas.sh: a closed loop of VUS virtual users for DURATION,
// each iteration one random key of KEYSPACE (uniform), read, then written back through the same
// node. LOOP says how the write is made:
//   cas    ringkv: GET (its ETag), then PUT with If-Match: <etag>; 201 = success, 412 = conflict.
//          etcd:   POST /v3/kv/range (the key's mod_revision), then POST /v3/kv/txn comparing
//                  MOD == mod_revision with a request_put on success; succeeded:true = success,
//                  a 200 without it = conflict.
//   plain  ringkv: GET, then PUT without a condition (last write wins); 201 = success.
// Anything else (another status, no answer, a read that found nothing) is an error. The write
// alone is tagged op=write; its latency is http_req_duration{op:write}. Counters: rmw_success,
// rmw_conflict, rmw_error (per phase: read or write) and rmw_error_status{status:...}.
//   k6 run -e LOOP=cas -e STORE=ringkv -e NODES=... -e VUS=16 -e DURATION=60s loadtest/cas.js
import http from 'k6/http';
import encoding from 'k6/encoding';
import { Counter } from 'k6/metrics';
import { cfg, key, pickIndex, value, node, authHeaders, textSummary } from './lib.js';

const loop = __ENV.LOOP || 'cas';
if (!['cas', 'plain'].includes(loop)) throw new Error(`LOOP must be cas or plain, got "${loop}"`);
if (cfg.store === 'etcd' && loop !== 'cas') throw new Error('etcd: only LOOP=cas (a plain write is run.sh\'s put)');
const vus = Math.max(1, Number(__ENV.VUS || 16));

const success = new Counter('rmw_success');
const conflict = new Counter('rmw_conflict');
const errors = new Counter('rmw_error');
const errorStatus = new Counter('rmw_error_status');
// Statuses counted apart in the summary (a sub-metric needs a threshold to be reported).
const STATUSES = ['no-etag', 'absent', '0', '200', '201', '400', '404', '409', '412', '413', '428', '500', '502', '503', '504'];

export const options = {
  discardResponseBodies: true,
  summaryTrendStats: ['avg', 'min', 'med', 'p(90)', 'p(99)', 'p(99.9)', 'max'],
  systemTags: ['status', 'method', 'expected_response', 'scenario', 'error_code'],
  scenarios: { loop: { executor: 'constant-vus', vus, duration: cfg.duration, gracefulStop: '15s' } },
  thresholds: Object.assign(
    {
      'http_req_duration{op:read}': ['p(99)>=0'],
      'http_req_duration{op:write}': ['p(99)>=0'],
      'rmw_error{phase:read}': ['count>=0'],
      'rmw_error{phase:write}': ['count>=0'],
    },
    ...STATUSES.map((s) => ({ [`rmw_error_status{status:${s}}`]: ['count>=0'] })),
  ),
};

const timeout = cfg.timeout;
const readParams = {
  headers: authHeaders, tags: { op: 'read' }, responseType: 'none', timeout,
  responseCallback: http.expectedStatuses(200),
};
const writeParams = {
  headers: Object.assign({ 'Content-Type': 'application/octet-stream' }, authHeaders),
  tags: { op: 'write' }, responseType: 'none', timeout,
  // A 412 is the answer a lost race deserves, not a failure of the store.
  responseCallback: http.expectedStatuses(201, 412),
};
const etcdReadParams = {
  headers: { 'Content-Type': 'application/json' }, tags: { op: 'read' }, responseType: 'text', timeout,
  responseCallback: http.expectedStatuses(200),
};
const etcdWriteParams = Object.assign({}, etcdReadParams, { tags: { op: 'write' } });
const value64 = encoding.b64encode(value);

function error(phase, status) {
  errors.add(1, { phase });
  errorStatus.add(1, { status: String(status) });
}

function ringkv(id, base) {
  const url = `${base}/v0/entity?id=${id}`;
  const read = http.get(url, readParams);
  const tag = read.headers.Etag;
  if (read.status !== 200 || (loop === 'cas' && !tag)) return error('read', read.status === 200 ? 'no-etag' : read.status);
  const params = loop === 'cas'
    ? Object.assign({}, writeParams, { headers: Object.assign({ 'If-Match': tag }, writeParams.headers) })
    : writeParams;
  const write = http.put(url, value, params);
  if (write.status === 201) success.add(1);
  else if (write.status === 412 && loop === 'cas') conflict.add(1);
  else error('write', write.status);
}

function etcd(id, base) {
  const k = encoding.b64encode(id);
  const read = http.post(`${base}/v3/kv/range`, `{"key":"${k}"}`, etcdReadParams);
  let revision;
  if (read.status === 200) {
    const kvs = JSON.parse(read.body).kvs;
    if (kvs && kvs.length === 1) revision = kvs[0].mod_revision; // a string: int64 in JSON
  }
  if (revision === undefined) return error('read', read.status === 200 ? 'absent' : read.status);
  const txn = `{"compare":[{"key":"${k}","target":"MOD","result":"EQUAL","mod_revision":"${revision}"}],`
    + `"success":[{"request_put":{"key":"${k}","value":"${value64}"}}]}`;
  const write = http.post(`${base}/v3/kv/txn`, txn, etcdWriteParams);
  if (write.status !== 200) return error('write', write.status);
  // The gateway leaves false out of its JSON: no "succeeded" is a failed compare.
  if (JSON.parse(write.body).succeeded === true) success.add(1);
  else conflict.add(1);
}

export default function () {
  const id = key(pickIndex());
  const base = node(); // both requests through one node, as one client connected to it would
  if (cfg.store === 'etcd') etcd(id, base);
  else ringkv(id, base);
}

export function handleSummary(data) {
  const title = `${loop} read-modify-write on ${cfg.store}, ${vus} VUs, ${cfg.keyspace} keys of ${cfg.valueSize} B`;
  data.ringkv = { config: cfg, loop, vus, title };
  const out = { stdout: textSummary(data, title) };
  if (__ENV.SUMMARY_JSON) out[__ENV.SUMMARY_JSON] = JSON.stringify(data, null, 2);
  return out;
}
