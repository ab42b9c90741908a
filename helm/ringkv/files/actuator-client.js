// What the k6 scripts of the backup CronJob (backup.js) and of the restore Job (restore.js) share:
// the admin token's header, the comma-separated URL lists of their environment, and how they fail and
// read the nodes' answers. Each script's ConfigMap holds this file beside the script (both mounted at
// /scripts, templates/_backup.tpl), where k6 resolves `import ... from './actuator-client.js'`.
// RINGKV_TOKEN: a token of role admin, or empty (security off).
import exec from 'k6/execution';

const token = __ENV.RINGKV_TOKEN || '';

// The headers of every request to a node's management port: the admin token, when there is one.
export const headers = token ? { Authorization: `Bearer ${token}` } : {};

// The URLs of a comma-separated list (an environment variable, perhaps unset), blanks dropped.
export function urls(list) {
  return (list || '').split(',').map((url) => url.trim()).filter((url) => url);
}

// Stops the run with a non-zero exit code (108), which fails the Job's pod; fail() would not.
export function fail(message) {
  exec.test.abort(message);
}

// The answer's JSON body, or null when it has none.
export function json(res) {
  try {
    return res.json();
  } catch (e) {
    return null;
  }
}

// The pauses of a poll: returns a function that gives 1 s, then twice the last, up to pollSeconds
// (each poll its own), so that a small backup or restore is seen done within seconds and a long one
// is asked about every pollSeconds.
export function growingPauses(pollSeconds) {
  let next = Math.min(1, pollSeconds);
  return () => {
    const pause = next;
    next = Math.min(next * 2, pollSeconds);
    return pause;
  };
}

// The answer's status and body (or k6's error) for a log line.
export function answer(res) {
  return `${res.status} ${res.body || res.error || ''}`.trim();
}
