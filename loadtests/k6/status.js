// GET /v0/status at a constant rate: the no-op route, the baseline that the hot-path benchmark
// compares the store's routes with (server CPU per request, latency).
//   TARGETS=http://127.0.0.1:8080 RATE=25000 DURATION=30s VUS=64 MAX_VUS=64 k6 run status.js
// Every knob is described in lib/kvlab.js.
import http from 'k6/http';
import { openModelOptions, params, summarize, target } from './lib/kvlab.js';

export const options = openModelOptions(['status']);
http.setResponseCallback(http.expectedStatuses(200));

const requestParams = params('status');

export default function () {
  http.get(`${target()}/v0/status`, requestParams);
}

export function handleSummary(data) {
  return summarize('status', ['status'], data);
}
