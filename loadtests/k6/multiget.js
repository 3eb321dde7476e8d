// Multi-gets at a constant rate over a key space filled before (fill.js): each request is
// POST /v0/entities/get with MULTIGET_SIZE random keys, one per line, answered in the course's
// chunked range format; the latency is the time to the last byte of the answer. Keys read per
// second are the achieved rate times MULTIGET_SIZE (keys_per_request and keys_rate in the summary).
//   TARGETS=http://127.0.0.1:8080 RATE=50 DURATION=30s KEYS=1000000 MULTIGET_SIZE=100 k6 run multiget.js
// MULTIGET_SIZE is read here (environment, else lab/defaults.env); every other knob is described in lib/kvlab.js.
import http from 'k6/http';
import { cfg, durationSeconds, key, knob, openModelOptions, params, randomIndex, summarize, target } from './lib/kvlab.js';

const size = Math.floor(Number(knob('MULTIGET_SIZE')));
if (!(size >= 1)) throw new Error(`MULTIGET_SIZE must be at least 1, got '${knob('MULTIGET_SIZE')}'`);

export const options = openModelOptions(['multiget']);
http.setResponseCallback(http.expectedStatuses(200));

const requestParams = Object.assign(params('multiget'), { headers: { 'Content-Type': 'text/plain' } });
const query = cfg.replicas === '' ? '' : `?replicas=${cfg.replicas}`;

export default function () {
  const keys = [];
  for (let i = 0; i < size; i++) keys.push(key(randomIndex()));
  http.post(`${target()}/v0/entities/get${query}`, `${keys.join('\n')}\n`, requestParams);
}

export function handleSummary(data) {
  const iterations = data.metrics.iterations ? data.metrics.iterations.values.count : 0;
  return summarize('multiget', ['multiget'], data, {
    keys_per_request: size,
    keys_rate: (iterations * size) / durationSeconds(cfg.duration),
  });
}
