// Expiring writes at a constant total rate: each request is, with probability READ_SHARE (0.5), a
// GET of a key this VU wrote earlier in the phase, else a PUT of a VALUE_SIZE-byte body with
// ttl=TTL seconds (30). Every PUT writes a key of its own (KEY_PREFIX + "ttl-" + VU + "-" + count),
// so that what a GET answers depends on that one write alone, and the phase leaves the filled keys
// alone. A GET of a key written less than TTL - 2 s ago
// must answer 200, of one written more than TTL + 2 s ago 404 (the server's and this machine's
// clocks may differ by a second or so): answers that break this are counted as ttl_wrong.
//   TARGETS=http://127.0.0.1:8080 RATE=1000 DURATION=60s KEYS=1000000 TTL=30 k6 run ttl.js
// Every knob is described in lib/kvlab.js.
import exec from 'k6/execution';
import http from 'k6/http';
import { Counter } from 'k6/metrics';
import { cfg, knob, makeValue, openModelOptions, params, summarize, target } from './lib/kvlab.js';

const ttl = Math.floor(Number(knob('TTL')));
if (!(ttl >= 1)) throw new Error(`TTL must be a whole number of seconds, at least 1, got '${knob('TTL')}'`);
if (!(cfg.readShare >= 0 && cfg.readShare <= 1)) throw new Error('READ_SHARE must be within 0..1');

export const options = openModelOptions(['get', 'put']);
// 404 is what a GET of an expired key must answer.
http.setResponseCallback(http.expectedStatuses(200, 201, 404));

const wrong = new Counter('ttl_wrong');
const value = makeValue(cfg.valueSize);
const getParams = params('get');
const putParams = params('put');
const replicasParam = cfg.replicas === '' ? '' : `&replicas=${cfg.replicas}`;
// The keys this VU wrote, with when: a ring, so a GET may pick one still live or one long expired.
const RING = 4096;
const written = [];
let next = 0;
let puts = 0;

/** A key no other PUT of the phase writes. */
function ttlKey() {
  puts += 1;
  return `${cfg.keyPrefix}ttl-${exec.vu.idInTest}-${puts}`;
}

function url(base, k, query = '') {
  return `${base}/v0/entity?id=${encodeURIComponent(k)}${replicasParam}${query}`;
}

export default function () {
  if (written.length > 0 && Math.random() < cfg.readShare) {
    const [k, at] = written[Math.floor(Math.random() * written.length)];
    const age = (Date.now() - at) / 1000;
    const res = http.get(url(target(), k), getParams);
    if ((age < ttl - 2 && res.status === 404) || (age > ttl + 2 && res.status === 200)) {
      wrong.add(1);
    }
    return;
  }
  const k = ttlKey();
  const res = http.put(url(target(), k, `&ttl=${ttl}`), value, putParams);
  if (res.status === 201) {
    written[next] = [k, Date.now()];
    next = (next + 1) % RING;
  }
}

export function handleSummary(data) {
  const counted = data.metrics.ttl_wrong;
  return summarize('ttl', ['get', 'put'], data, {
    ttl_s: ttl,
    read_share: cfg.readShare,
    ttl_wrong: counted ? counted.values.count : 0,
  });
}
