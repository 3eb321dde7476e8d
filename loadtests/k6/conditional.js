// Conditional updates at a constant rate over a key space filled before (fill.js), as a
// read-modify-write client makes them: each iteration GETs a random key's value and ETag, then PUTs
// a new value with If-Match: that tag. A 412 is an expected outcome (another writer changed the key
// in between: the client would read again and retry), counted apart as a conflict, not as an error.
// A key the GET finds absent (a 404 counts as a failure, as in get.js) is created If-None-Match: *.
// RATE counts updates, each of two requests; the latency of each kind is reported apart.
//   TARGETS=http://127.0.0.1:8080 RATE=200 DURATION=30s KEYS=1000000 k6 run conditional.js
// Every knob is described in lib/kvlab.js.
import http from 'k6/http';
import { Counter } from 'k6/metrics';
import { cfg, entityUrl, key, makeValue, openModelOptions, params, randomIndex, summarize, target } from './lib/kvlab.js';

const OPS = ['get', 'conditional_put'];
export const options = openModelOptions(OPS);
http.setResponseCallback(http.expectedStatuses(200, 201, 412));

const conflicts = new Counter('conditional_conflicts');
const updates = new Counter('conditional_updates');
const value = makeValue(cfg.valueSize);
const getParams = params('get');

/** The PUT's parameters: the op tag and timeout of every request, and its condition. */
function conditionalParams(header, tag) {
  return Object.assign(params('conditional_put'), { headers: { [header]: tag } });
}

export default function () {
  const url = entityUrl(target(), key(randomIndex()));
  const read = http.get(url, getParams);
  let written;
  if (read.status === 200) {
    const tag = read.headers.Etag;
    if (!tag) throw new Error(`a 200 without an ETag from ${url}: the node does not serve conditional requests`);
    written = http.put(url, value, conditionalParams('If-Match', tag));
  } else if (read.status === 404) {
    written = http.put(url, value, conditionalParams('If-None-Match', '*'));
  } else {
    return; // the GET failed, and counts as such: no update to make
  }
  if (written.status === 412) conflicts.add(1);
  else if (written.status === 201) updates.add(1);
}

function counted(data, name) {
  return data.metrics[name] ? data.metrics[name].values.count : 0;
}

export function handleSummary(data) {
  const made = counted(data, 'conditional_updates');
  const refused = counted(data, 'conditional_conflicts');
  return summarize('conditional', OPS, data, {
    requests_per_update: 2,
    conditional_updates: made,
    conditional_conflicts: refused,
    conflict_share: made + refused > 0 ? refused / (made + refused) : 0,
  });
}
