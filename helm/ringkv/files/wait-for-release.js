// The first step of every client pod of the chart (the helm test, the k6 loadtest Job, the backup
// and restore Jobs), an init container before the pod sends anything: polls GET /v0/status through
// the client Service until it answers 200 "OK", and fails the pod once WAIT_TIMEOUT_SECONDS have
// passed without. Right after an install no pod is ready and the Service routes nowhere (or, for a
// moment, to whatever held its address before): a client that began then kept its connections to
// that, and failed every request. With TLS, k6 trusts only the release's CA (SSL_CERT_FILE), so a
// certificate of anything else is no answer. Each poll is a new connection, and k6 exits when
// ready: the next container starts its own connections, to a Service that routes to ready nodes.
// BASE_URL: the client Service; WAIT_TIMEOUT_SECONDS: the bound.
import http from 'k6/http';
import { sleep } from 'k6';
import exec from 'k6/execution';

const base = __ENV.BASE_URL;
const timeoutSeconds = Number(__ENV.WAIT_TIMEOUT_SECONDS);

export const options = {
  // The deadline is the script's own, with k6's a margin later, so that the message below is
  // what a timeout prints.
  scenarios: {
    wait: { executor: 'per-vu-iterations', vus: 1, iterations: 1, maxDuration: `${timeoutSeconds + 30}s` },
  },
  noConnectionReuse: true,
};

export default function () {
  if (!(timeoutSeconds > 0)) exec.test.abort(`WAIT_TIMEOUT_SECONDS is '${__ENV.WAIT_TIMEOUT_SECONDS}', not a number of seconds`);
  const deadline = Date.now() + timeoutSeconds * 1000;
  for (;;) {
    const res = http.get(`${base}/v0/status`, { timeout: '5s', responseCallback: http.expectedStatuses(200) });
    if (res.status === 200 && res.body === 'OK') {
      console.log(`ready: GET ${base}/v0/status -> 200`);
      return;
    }
    const answer = res.status === 0 ? res.error : `${res.status} '${String(res.body).slice(0, 100)}'`;
    if (Date.now() >= deadline) {
      // Stops the run with a non-zero exit code (108), which fails the pod.
      exec.test.abort(`the release did not answer GET ${base}/v0/status with 200 within ${timeoutSeconds}s`
        + ` (waitForRelease.timeoutSeconds); last answer: ${answer}`);
    }
    console.log(`waiting for the release: GET ${base}/v0/status -> ${answer}`);
    sleep(2);
  }
}
