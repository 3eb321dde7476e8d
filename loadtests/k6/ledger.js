// The lab's ledger in a k6 pod (the Kubernetes executor runs it beside a phase that breaks
// something; on one machine the lab runs loadtests/lab/ledger/workload.py instead): writes,
// overwrites, deletes and reads keys of its own at LEDGER_RATE operations a second, and prints every
// operation on a line of its own for the lab to check:
//   KVLAB-LEDGER <seq> <put|delete|get> <key> <invoked ms> <completed ms> <ok|failed|uncertain> <status> <seen>
// status is the HTTP status, or e<k6 error code> when there was none; seen, for a GET answered 200,
// the seq of the write whose value it returned (-1: a value the ledger did not write), else "-".
// Each key belongs to one VU, so the operations on a key never overlap. Run with --log-format raw.
//   TARGETS=http://127.0.0.1:8080 DURATION=60s LEDGER_TAG=a1b2c3 LEDGER_KEYS=200 LEDGER_RATE=50 \
//     k6 run --log-format raw ledger.js
// Also: REPLICAS, REQUEST_TIMEOUT (lib/kvlab.js), LEDGER_WORKERS (VUs, 8).
import http from 'k6/http';
import exec from 'k6/execution';
import { cfg, durationSeconds, entityUrl } from './lib/kvlab.js';

const tag = __ENV.LEDGER_TAG || '';
const keys = Number(__ENV.LEDGER_KEYS || 200);
const rate = Number(__ENV.LEDGER_RATE || 50);
const workers = Math.max(1, Math.min(Number(__ENV.LEDGER_WORKERS || 8), keys));
if (!/^[A-Za-z0-9]+$/.test(tag)) throw new Error('LEDGER_TAG must be letters and digits');
if (!(keys >= 1 && rate >= 1)) throw new Error('LEDGER_KEYS and LEDGER_RATE must be at least 1');

// An operation cut short by the end of the test would be missing from the log while it may have
// been applied: the test waits for every request to end (k6 gives up on one after REQUEST_TIMEOUT,
// 60 s when unset).
const timeoutSeconds = __ENV.REQUEST_TIMEOUT ? durationSeconds(__ENV.REQUEST_TIMEOUT) : 60;

export const options = {
  scenarios: {
    ledger: {
      executor: 'constant-arrival-rate',
      rate: Math.round(rate),
      timeUnit: '1s',
      duration: cfg.duration,
      preAllocatedVUs: workers,
      maxVUs: workers,
      gracefulStop: `${Math.ceil(timeoutSeconds) + 5}s`,
    },
  },
  systemTags: ['status'],
  userAgent: 'kvlab-k6-ledger',
};

// Operations in this proportion (loadtests/lab/ledger/workload.py's MIX).
const PUT_SHARE = 0.5;
const GET_SHARE = 0.3;
let count = 0;

function keyName(i) {
  return `ledger-${tag}-${String(i).padStart(5, '0')}`;
}

// A dial or DNS error: no connection was made, so nothing was sent.
function notSent(code) {
  return (code >= 1100 && code < 1200) || (code >= 1210 && code < 1220);
}

function writeOutcome(res) {
  if (res.status === 201 || res.status === 202) return 'ok';
  if (res.status === 0 ? notSent(res.error_code) : res.status >= 400 && res.status < 500) return 'failed';
  return 'uncertain';
}

function seen(k, body) {
  const m = /^ledger (\S+) (\S+) (\d+)$/.exec(body || '');
  return m && m[1] === tag && m[2] === k ? m[3] : '-1';
}

export default function () {
  const vu = exec.vu.idInTest - 1;
  const mine = Math.floor((keys - 1 - vu) / workers) + 1;
  if (vu >= workers || mine < 1) return;
  const k = keyName(vu + workers * Math.floor(Math.random() * mine));
  const seq = count * workers + vu + 1;
  count += 1;
  const r = Math.random();
  const kind = r < PUT_SHARE ? 'put' : r < PUT_SHARE + GET_SHARE ? 'get' : 'delete';
  const url = entityUrl(cfg.targets[Math.floor(Math.random() * cfg.targets.length)], k);
  const params = { tags: { op: kind }, responseType: 'text' };
  if (__ENV.REQUEST_TIMEOUT) params.timeout = __ENV.REQUEST_TIMEOUT;
  const method = { put: 'PUT', get: 'GET', delete: 'DELETE' }[kind];
  const body = kind === 'put' ? `ledger ${tag} ${k} ${seq}` : null;
  const invoked = Date.now();
  const res = http.request(method, url, body, params);
  const completed = Date.now();
  let outcome;
  let saw = '-';
  if (kind === 'get') {
    outcome = res.status === 200 || res.status === 404 ? 'ok' : 'failed';
    if (res.status === 200) saw = seen(k, res.body);
  } else {
    outcome = writeOutcome(res);
  }
  const status = res.status || `e${res.error_code}`;
  console.log(`KVLAB-LEDGER ${seq} ${kind} ${k} ${invoked} ${completed} ${outcome} ${status} ${saw}`);
}
