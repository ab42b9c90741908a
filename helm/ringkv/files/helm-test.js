// `helm test <release>` (templates/tests/): through the client Service, write a key (PUT, expects
// 201), read it back (GET, expects the same value) and delete it (DELETE, expects 202), with the
// release's token when security is on; k6 trusts the nodes' CA through SSL_CERT_FILE.
// BASE_URL: the client Service; RINGKV_TOKEN: a write token, or empty.
import http from 'k6/http';
import { sleep } from 'k6';
import exec from 'k6/execution';

export const options = { vus: 1, iterations: 1 };

// Stops the test with a non-zero exit code (108), which fails the helm test; fail() would not.
function fail(message) {
  exec.test.abort(message);
}

const base = __ENV.BASE_URL;
const token = __ENV.RINGKV_TOKEN || '';
const params = { headers: token ? { Authorization: `Bearer ${token}` } : {}, timeout: '10s' };

function expect(what, res, status) {
  if (res.status !== status) fail(`${what} -> ${res.status} ${res.error || ''}, expected ${status}`);
  console.log(`ok: ${what} -> ${res.status}`);
}

export default function () {
  const key = `helm-test-${Date.now()}-${Math.floor(Math.random() * 1e9)}`;
  const value = `ringkv-helm-test-value-${key}`;
  console.log(`ringkv helm test against ${base}, key=${key}`);
  let res;
  for (let i = 0; i < 30; i++) {
    res = http.get(`${base}/v0/status`, params);
    if (res.status === 200) break;
    sleep(2);
  }
  expect('GET /v0/status', res, 200);
  expect(`PUT /v0/entity?id=${key}`, http.put(`${base}/v0/entity?id=${key}`, value, params), 201);
  for (let i = 0; ; i++) {
    res = http.get(`${base}/v0/entity?id=${key}`, params);
    if (res.status === 200 && res.body === value) break;
    if (i >= 4) fail(`GET /v0/entity?id=${key} returned ${res.status} '${res.body}', expected '${value}'`);
    sleep(1);
  }
  console.log(`ok: GET /v0/entity?id=${key} -> 200, value matches`);
  expect(`DELETE /v0/entity?id=${key}`, http.del(`${base}/v0/entity?id=${key}`, null, params), 202);
  console.log('PASS');
}
