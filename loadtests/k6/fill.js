// Fills the key space before GET, range and mixed phases: PUTs every key 0..KEYS-1 exactly once,
// VALUE_SIZE-byte values, as fast as FILL_VUS virtual users with BATCH requests in flight each
// allow (a closed model: this measures nothing, it only prepares data).
//   TARGETS=http://127.0.0.1:8080 KEYS=1000000 VALUE_SIZE=1024 FILL_VUS=16 BATCH=8 k6 run fill.js
// FILL_START (0) starts at another index; FILL_MAX_DURATION bounds the run; a PUT not answered
// within FILL_REQUEST_TIMEOUT fails. Defaults and other knobs: lib/kvlab.js. Keys go round-robin
// over TARGETS by batch. A PUT that is not stored (a 503 of a node that sheds load, a 504 of a replica
// too slow, no answer) is sent again after a pause, RETRIES times at most: the phases after the fill
// read every key, so the fill keeps at it rather than leave holes. Its summary counts every try.
import http from 'k6/http';
import exec from 'k6/execution';
import { sleep } from 'k6';
import { cfg, commonOptions, entityUrl, key, knob, makeValue, params, summarize } from './lib/kvlab.js';

const vus = Number(knob('FILL_VUS'));
const batch = Math.max(1, Number(knob('BATCH')));
const first = Number(__ENV.FILL_START || 0);
const iterations = Math.ceil(cfg.keys / batch);

export const options = {
  ...commonOptions(['fill'], {
    main: {
      executor: 'shared-iterations',
      vus: Math.min(vus, iterations),
      iterations,
      maxDuration: knob('FILL_MAX_DURATION'),
    },
  }, false),
  batch,
  batchPerHost: batch,
};
http.setResponseCallback(http.expectedStatuses(201));

const RETRIES = 3;
const value = makeValue(cfg.valueSize);
const requestParams = params('fill', knob('FILL_REQUEST_TIMEOUT'));

export default function () {
  const i = exec.scenario.iterationInTest;
  const base = cfg.targets[i % cfg.targets.length];
  const requests = [];
  for (let k = i * batch; k < Math.min((i + 1) * batch, cfg.keys); k++) {
    requests.push(['PUT', entityUrl(base, key(first + k)), value, requestParams]);
  }
  let pending = requests;
  for (let attempt = 0; pending.length > 0 && attempt <= RETRIES; attempt++) {
    if (attempt > 0) sleep(0.2 * attempt);
    const answers = http.batch(pending);
    pending = pending.filter((_, j) => answers[j].status !== 201);
  }
}

export function handleSummary(data) {
  const elapsed = data.state.testRunDurationMs / 1000;
  const requests = data.metrics.http_reqs ? data.metrics.http_reqs.values.count : 0;
  return summarize('fill', ['fill'], data, {
    model: `closed (shared-iterations: ${Math.min(vus, iterations)} VUs x ${batch} requests in flight)`,
    requested_rate: null,
    duration_s: elapsed,
    achieved_rate: requests / elapsed,
    keys_filled: [first, first + cfg.keys],
    fill_vus: vus,
    batch,
  });
}
