// `helm test <release>` (templates/tests/): through the client Service, write a key (PUT, expects
// 201), read it back (GET, expects the same value), then the conditional requests (create if
// absent: 201 once, then 412; compare-and-set with the tag read: 201, with a stale tag: 412) and a
// conditional delete (202), with the release's token when security is on; k6 trusts the nodes' CA through SSL_CERT_FILE.
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
  const read = res.headers['Etag'];
  if (!read) fail(`GET /v0/entity?id=${key} answered no ETag`);
  const entity = `${base}/v0/entity?id=${key}`;
  const when = (header, tag) => ({ ...params, headers: { ...params.headers, [header]: tag } });
  expect(`PUT ${key}-lock If-None-Match: *`, http.put(`${entity}-lock`, 'me', when('If-None-Match', '*')), 201);
  expect(`PUT ${key}-lock If-None-Match: * again`, http.put(`${entity}-lock`, 'you', when('If-None-Match', '*')), 412);
  const swapped = http.put(entity, `${value}-2`, when('If-Match', read));
  expect(`PUT ${key} If-Match the tag read`, swapped, 201);
  expect(`PUT ${key} If-Match the same tag again`, http.put(entity, `${value}-3`, when('If-Match', read)), 412);
  expect(`DELETE ${key} If-Match the new tag`, http.del(entity, null, when('If-Match', swapped.headers['Etag'])), 202);
  expect(`DELETE ${key}-lock`, http.del(`${entity}-lock`, null, params), 202);
  console.log('PASS');
}
