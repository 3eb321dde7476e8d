// GET at a constant rate over a key space filled before (fill.js): random keys, so every answer
// should be 200; a 404 counts as a failure because it means the fill did not cover the key space.
//   TARGETS=http://127.0.0.1:8080 RATE=5000 DURATION=30s KEYS=1000000 k6 run get.js
// Every knob is described in lib/kvlab.js.
import http from 'k6/http';
import { entityUrl, key, openModelOptions, params, randomIndex, summarize, target } from './lib/kvlab.js';

export const options = openModelOptions(['get']);
http.setResponseCallback(http.expectedStatuses(200));

const requestParams = params('get');

export default function () {
  http.get(entityUrl(target(), key(randomIndex())), requestParams);
}

export function handleSummary(data) {
  return summarize('get', ['get'], data);
}
