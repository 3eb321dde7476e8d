// The multi-get benchmark's load (multiget.sh): a closed model of VUS virtual users for DURATION,
// each sending, as fast as answers come, either one GET of a random key (MODE=get) or one
// POST /v0/entities/get of MULTIGET_SIZE random keys (MODE=multiget). Writes SUMMARY_JSON with the
// requests, failures and keys answered (of the requests that got 200); multiget.sh divides them
// by the node's CPU time.
import http from 'k6/http';

const mode = __ENV.MODE;
const keys = Number(__ENV.KEYS);
const size = Number(__ENV.MULTIGET_SIZE);
const prefix = __ENV.KEY_PREFIX || 'k';
const base = __ENV.TARGET;
if (mode !== 'get' && mode !== 'multiget') throw new Error(`MODE must be get or multiget, got '${mode}'`);

export const options = {
  scenarios: { main: { executor: 'constant-vus', vus: Number(__ENV.VUS), duration: __ENV.DURATION, gracefulStop: '5s' } },
  discardResponseBodies: true,
  systemTags: ['status'],
  summaryTrendStats: ['med', 'p(99)'],
};
http.setResponseCallback(http.expectedStatuses(200));

function key() {
  return prefix + String(Math.floor(Math.random() * keys)).padStart(10, '0');
}

export default function () {
  if (mode === 'get') {
    http.get(`${base}/v0/entity?id=${key()}`);
  } else {
    const asked = [];
    for (let i = 0; i < size; i++) asked.push(key());
    http.post(`${base}/v0/entities/get`, `${asked.join('\n')}\n`);
  }
}

export function handleSummary(data) {
  const requests = data.metrics.http_reqs ? data.metrics.http_reqs.values.count : 0;
  const failed = data.metrics.http_req_failed ? data.metrics.http_req_failed.values.passes : 0;
  const d = data.metrics.http_req_duration.values;
  return {
    [__ENV.SUMMARY_JSON]: JSON.stringify({
      mode, requests, failed, keys: (requests - failed) * (mode === 'get' ? 1 : size),
      duration_s: data.state.testRunDurationMs / 1000, p50_ms: d.med, p99_ms: d['p(99)'],
    }),
    stdout: '',
  };
}
