// Mixed reads and writes at one constant total rate over a filled key space: each request is a GET
// with probability READ_SHARE (0.5), else a PUT of a VALUE_SIZE-byte body; GET and PUT latencies
// are reported apart and together.
//   TARGETS=http://127.0.0.1:8080 RATE=5000 DURATION=30s KEYS=1000000 READ_SHARE=0.9 k6 run mixed.js
// Every knob is described in lib/kvlab.js.
import http from 'k6/http';
import { cfg, entityUrl, key, makeValue, openModelOptions, params, randomIndex, summarize, target } from './lib/kvlab.js';

if (!(cfg.readShare >= 0 && cfg.readShare <= 1)) throw new Error('READ_SHARE must be within 0..1');

export const options = openModelOptions(['get', 'put']);
http.setResponseCallback(http.expectedStatuses(200, 201));

const value = makeValue(cfg.valueSize);
const getParams = params('get');
const putParams = params('put');

export default function () {
  const url = entityUrl(target(), key(randomIndex()));
  if (Math.random() < cfg.readShare) {
    http.get(url, getParams);
  } else {
    http.put(url, value, putParams);
  }
}

export function handleSummary(data) {
  return summarize('mixed', ['get', 'put'], data, { read_share: cfg.readShare });
}
