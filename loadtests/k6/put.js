// PUT at a constant rate: random keys of the key space, VALUE_SIZE-byte bodies (open model).
//   TARGETS=http://127.0.0.1:8080 RATE=5000 DURATION=30s KEYS=1000000 VALUE_SIZE=1024 k6 run put.js
// Every knob is described in lib/kvlab.js.
import http from 'k6/http';
import { cfg, entityUrl, key, makeValue, openModelOptions, params, randomIndex, summarize, target } from './lib/kvlab.js';

export const options = openModelOptions(['put']);
http.setResponseCallback(http.expectedStatuses(201));

const value = makeValue(cfg.valueSize);
const requestParams = params('put');

export default function () {
  http.put(entityUrl(target(), key(randomIndex())), value, requestParams);
}

export function handleSummary(data) {
  return summarize('put', ['put'], data);
}
