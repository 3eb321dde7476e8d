// Range reads at a constant rate: GET /v0/entities?start=<k>&end=<k+RANGE_SIZE> at a random start
// inside a filled key space, so each answer streams RANGE_SIZE entries; the latency is the time to
// the last byte of the stream.
//   TARGETS=http://127.0.0.1:8080 RATE=200 DURATION=30s KEYS=1000000 RANGE_SIZE=100 k6 run range.js
// Every knob is described in lib/kvlab.js.
import http from 'k6/http';
import { cfg, key, openModelOptions, params, rangeUrl, summarize, target } from './lib/kvlab.js';

export const options = openModelOptions(['range']);
http.setResponseCallback(http.expectedStatuses(200));

const requestParams = params('range');
const span = Math.max(1, Math.min(cfg.rangeSize, cfg.keys));

export default function () {
  const start = Math.floor(Math.random() * (cfg.keys - span + 1));
  http.get(rangeUrl(target(), key(start), key(start + span)), requestParams);
}

export function handleSummary(data) {
  return summarize('range', ['range'], data, { range_size: span });
}
