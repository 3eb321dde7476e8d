// What every kvlab k6 scenario shares: configuration from the environment, keys, values, URLs,
// the open-model scenario, thresholds, and a handleSummary that writes machine-readable JSON.
//
// Environment (the same names drive the wrk2 Lua scripts). A knob not set in the environment takes
// its default from the lab's defaults file, loadtests/lab/defaults.env (KVLAB_DEFAULTS names
// another; in Kubernetes the file reaches the pods with the scripts), where each is described:
//   TARGETS       comma-separated base URLs; requests go round-robin over them (http://127.0.0.1:8080)
//   RATE          requests per second, held constant whatever the server does
//   DURATION      how long to hold it, a k6 duration: 30s, 2m
//   KEYS          size of the key space: keys are KEY_PREFIX + 10-digit index, 0..KEYS-1
//   KEY_PREFIX, VALUE_SIZE (bytes in every PUT body)
//   REPLICAS      ack/from for every request, for example 2/3; empty: the server's default quorum
//   VUS, MAX_VUS  virtual users (each one keep-alive connection per target) allocated at start
//                 and at most; when all are busy the scenario drops iterations (reported)
//   SLO_P99_MS    threshold on p99 latency in ms
//   REQUEST_TIMEOUT  how long a request may take before it counts as failed, a k6 duration: a
//                 client gives up on a node that does not answer, rather than wait with every VU
//   MAX_ERROR_RATE  threshold on the share of failed requests
//   SUMMARY_JSON  where handleSummary writes its JSON (summary.json)
//   RANGE_SIZE    keys per range read (range.js);  READ_SHARE  GETs in mixed.js and ttl.js
//   (conditional.js: RATE counts read-then-If-Match updates, two requests each)
//   TTL           seconds to live of ttl.js's PUTs (and wrk2/ttl.lua's)
// With every knob it uses set in the environment, a script runs without the defaults file.
import exec from 'k6/execution';

const DEFAULTS_FILE = __ENV.KVLAB_DEFAULTS || '../../lab/defaults.env';

/** NAME=value lines of the defaults file ("#" comments); none when it cannot be read. */
function readDefaults(path) {
  let text;
  try {
    text = open(path);
  } catch (e) {
    return null;
  }
  const values = {};
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (t === '' || t.startsWith('#')) continue;
    const at = t.indexOf('=');
    if (at > 0) values[t.slice(0, at)] = t.slice(at + 1);
  }
  return values;
}

const DEFAULTS = readDefaults(DEFAULTS_FILE);

/** A knob: the environment's value, else the defaults file's. */
export function knob(name) {
  const raw = __ENV[name];
  if (raw !== undefined && raw !== '') return raw;
  if (DEFAULTS === null) throw new Error(`${name} is not set and the defaults file ${DEFAULTS_FILE} cannot be read (KVLAB_DEFAULTS)`);
  if (!(name in DEFAULTS)) throw new Error(`${name} is not set and ${DEFAULTS_FILE} has no default for it`);
  return DEFAULTS[name];
}

function number(name) {
  const raw = knob(name);
  const v = Number(raw);
  if (raw === '' || !Number.isFinite(v)) throw new Error(`${name} must be a number, got '${raw}'`);
  return v;
}

function integer(name) {
  return Math.floor(number(name));
}

/** k6 duration ("90s", "2m", "1m30s", "500ms") in seconds. */
export function durationSeconds(text) {
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
  let total = 0;
  let matched = '';
  for (const m of text.matchAll(re)) {
    total += Number(m[1]) * { ms: 0.001, s: 1, m: 60, h: 3600 }[m[2]];
    matched += m[0];
  }
  if (matched !== text) throw new Error(`bad duration '${text}' (use 30s, 2m, 1m30s)`);
  return total;
}

export const cfg = Object.freeze({
  targets: (__ENV.TARGETS || 'http://127.0.0.1:8080')
    .split(',').map((s) => s.trim().replace(/\/+$/, '')).filter((s) => s.length > 0),
  rate: integer('RATE'),
  duration: knob('DURATION'),
  keys: integer('KEYS'),
  keyPrefix: knob('KEY_PREFIX'),
  valueSize: integer('VALUE_SIZE'),
  replicas: __ENV.REPLICAS || (DEFAULTS && DEFAULTS.REPLICAS) || '',
  vus: integer('VUS'),
  maxVus: integer('MAX_VUS'),
  sloP99Ms: number('SLO_P99_MS'),
  requestTimeout: knob('REQUEST_TIMEOUT'),
  maxErrorRate: number('MAX_ERROR_RATE'),
  summaryJson: __ENV.SUMMARY_JSON || 'summary.json',
  rangeSize: integer('RANGE_SIZE'),
  readShare: number('READ_SHARE'),
});

if (cfg.targets.length === 0) throw new Error('TARGETS is empty');
if (cfg.keys < 1) throw new Error('KEYS must be at least 1');
if (cfg.rate < 1) throw new Error('RATE must be at least 1');
if (cfg.replicas !== '' && !/^\d+\/\d+$/.test(cfg.replicas)) {
  throw new Error(`REPLICAS must look like ack/from, got '${cfg.replicas}'`);
}

const replicasParam = cfg.replicas === '' ? '' : `&replicas=${cfg.replicas}`;

/** The key of index i: prefix + 10 digits, so keys sort as their indexes do (ranges are exact). */
/** A request's parameters: its operation as a tag (the lab reads it), and its timeout. */
export function params(op, timeout = cfg.requestTimeout) {
  return { tags: { op }, timeout };
}

export function key(i) {
  return cfg.keyPrefix + String(i).padStart(10, '0');
}

export function randomIndex() {
  return Math.floor(Math.random() * cfg.keys);
}

/** The base URL for this iteration: round-robin over TARGETS. */
export function target() {
  return cfg.targets[exec.scenario.iterationInTest % cfg.targets.length];
}

export function entityUrl(base, k) {
  return `${base}/v0/entity?id=${encodeURIComponent(k)}${replicasParam}`;
}

export function rangeUrl(base, startKey, endKey) {
  return `${base}/v0/entities?start=${encodeURIComponent(startKey)}&end=${encodeURIComponent(endKey)}`;
}

/** A VALUE_SIZE-byte ASCII body, random once per VU (so compression cannot flatter the store). */
export function makeValue(size) {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  const parts = [];
  for (let i = 0; i < size; i++) parts.push(alphabet[Math.floor(Math.random() * alphabet.length)]);
  return parts.join('');
}

// Percentiles kept in the summary: the table's (50 ... 99.999) plus HdrHistogram's ticks (five per
// halving of 1-p, as wrk2 prints them) down to 1-p = 1e-5, enough to draw the percentile spectrum.
const TABLE_PERCENTILES = [50, 75, 90, 99, 99.9, 99.99, 99.999];

function spectrumPercentiles() {
  const ps = new Set([10, 20, 30, 40, ...TABLE_PERCENTILES]);
  for (let half = 1; half <= 17; half++) {
    const from = 1 - 2 ** -half;
    const step = 2 ** -half / 2 / 5;
    for (let i = 0; i < 5; i++) {
      const p = (from + i * step) * 100;
      if (p <= 99.999) ps.add(Number(p.toPrecision(8)));
    }
  }
  return [...ps].sort((a, b) => a - b);
}

export const PERCENTILES = spectrumPercentiles();
const TREND_STATS = ['min', 'avg', 'med', 'max', ...PERCENTILES.map((p) => `p(${p})`)];

// Status codes counted separately in the summary (any other code shows up as "other").
const STATUS_CODES = [0, 200, 201, 202, 304, 400, 404, 405, 408, 412, 413, 429, 500, 502, 503, 504];

/**
 * k6 options for one open-model (constant-arrival-rate) scenario named "main".
 * ops: the values of the "op" tag the scenario uses (each gets its own latency percentiles).
 */
export function openModelOptions(ops) {
  return commonOptions(ops, {
    main: {
      executor: 'constant-arrival-rate',
      rate: cfg.rate,
      timeUnit: '1s',
      duration: cfg.duration,
      preAllocatedVUs: Math.min(cfg.vus, cfg.maxVus),
      maxVUs: cfg.maxVus,
      gracefulStop: '5s',
    },
  });
}

/** Options around the given scenarios: thresholds, percentiles kept, tags, bodies discarded. */
export function commonOptions(ops, scenarios, latencyThresholds = true) {
  const thresholds = { http_req_failed: [`rate<${cfg.maxErrorRate}`] };
  if (latencyThresholds) {
    thresholds.http_req_duration = [`p(99)<${cfg.sloP99Ms}`];
    for (const op of ops) thresholds[`http_req_duration{op:${op}}`] = [`p(99)<${cfg.sloP99Ms}`];
  } else {
    // Still a submetric per op, so that its percentiles are in the summary.
    for (const op of ops) thresholds[`http_req_duration{op:${op}}`] = ['max>=0'];
  }
  for (const code of STATUS_CODES) thresholds[`http_reqs{status:${code}}`] = ['count>=0'];
  return {
    scenarios,
    thresholds,
    summaryTrendStats: TREND_STATS,
    // Only the tags the lab reads: status (the summary's status counts) and expected_response
    // (failed or not, in the per-request samples the lab turns into time series); the scripts tag
    // each request with its op. Every tag is carried by each of the dozen samples a request makes,
    // so fewer tags cost k6 less CPU; no per-URL tag either (a million keys, a million series).
    systemTags: ['status', 'expected_response'],
    discardResponseBodies: true,
    noConnectionReuse: false,
    userAgent: 'kvlab-k6',
  };
}

function trendValues(metric) {
  if (!metric) return null;
  const v = metric.values;
  const spectrum = PERCENTILES.map((p) => [p / 100, v[`p(${p})`]]);
  spectrum.unshift([0, v.min]);
  spectrum.push([1, v.max]);
  const table = {};
  for (const p of TABLE_PERCENTILES) table[`p${p}`] = v[`p(${p})`];
  table.p100 = v.max;
  return { unit: 'ms', min: v.min, mean: v.avg, max: v.max, percentiles: table, spectrum };
}

function count(data, name) {
  const m = data.metrics[name];
  return m ? m.values.count : 0;
}

function textTable(result) {
  const lines = [`kvlab ${result.scenario}: ${result.targets.join(', ')}`];
  const asked = result.requested_rate === null ? `${result.model}` : `requested ${result.requested_rate}/s`;
  lines.push(`  ${asked} for ${result.duration_s.toFixed(1)} s, achieved ` +
    `${result.achieved_rate.toFixed(1)}/s (${result.requests} requests, ` +
    `${result.dropped_iterations} dropped iterations, up to ${result.vus_max} VUs)`);
  const statuses = Object.entries(result.status_counts).map(([c, n]) => `${c}: ${n}`).join(', ');
  lines.push(`  statuses ${statuses}; failed ${(result.error_rate * 100).toFixed(3)} %`);
  for (const [op, lat] of Object.entries(result.latency)) {
    if (!lat) continue;
    const cells = Object.entries(lat.percentiles).map(([p, v]) => `${p.slice(1)}%=${v.toFixed(3)}`);
    lines.push(`  ${op} latency ms: ${cells.join(' ')}`);
  }
  for (const [name, ok] of Object.entries(result.thresholds)) {
    if (!name.startsWith('http_reqs{status')) lines.push(`  threshold ${name}: ${ok ? 'ok' : 'FAILED'}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The value a threshold expression holds to: "p(99)<10" -> the metric's p(99), "rate<0.01" -> its rate. */
function thresholdObserved(metric, expression) {
  const aggregation = expression.split(/[<>=!]/)[0].trim();
  const value = metric.values[aggregation];
  return value === undefined ? null : value;
}

/**
 * handleSummary for every scenario: writes SUMMARY_JSON and prints a short table.
 * extra: scenario-specific facts (range size, read share, ...).
 */
export function summarize(scenario, ops, data, extra = {}) {
  const durationS = durationSeconds(cfg.duration);
  const requests = count(data, 'http_reqs');
  const statusCounts = {};
  let counted = 0;
  for (const code of STATUS_CODES) {
    const n = count(data, `http_reqs{status:${code}}`);
    if (n > 0) statusCounts[String(code)] = n;
    counted += n;
  }
  if (requests > counted) statusCounts.other = requests - counted;
  const latency = { all: trendValues(data.metrics.http_req_duration) };
  if (ops.length > 1) for (const op of ops) latency[op] = trendValues(data.metrics[`http_req_duration{op:${op}}`]);
  // Each threshold's verdict per metric, and per expression the value k6 held to it.
  const thresholds = {};
  const thresholdValues = {};
  for (const [name, m] of Object.entries(data.metrics)) {
    if (!m.thresholds) continue;
    thresholds[name] = Object.values(m.thresholds).every((t) => t.ok);
    thresholdValues[name] = {};
    for (const [expression, t] of Object.entries(m.thresholds)) {
      thresholdValues[name][expression] = { observed: thresholdObserved(m, expression), ok: t.ok };
    }
  }
  const failed = data.metrics.http_req_failed;
  const result = {
    tool: 'k6',
    model: 'open (constant-arrival-rate)',
    scenario,
    targets: cfg.targets,
    requested_rate: cfg.rate,
    duration_s: durationS,
    test_run_duration_s: data.state.testRunDurationMs / 1000,
    requests,
    achieved_rate: count(data, 'iterations') / durationS,
    dropped_iterations: count(data, 'dropped_iterations'),
    vus_max: data.metrics.vus_max ? data.metrics.vus_max.values.max : null,
    error_rate: failed ? failed.values.rate : 0,
    status_counts: statusCounts,
    bytes_received: count(data, 'data_received'),
    bytes_sent: count(data, 'data_sent'),
    keys: cfg.keys,
    value_size: cfg.valueSize,
    replicas: cfg.replicas,
    slo_p99_ms: cfg.sloP99Ms,
    latency,
    thresholds,
    threshold_values: thresholdValues,
    ...extra,
  };
  return {
    [cfg.summaryJson]: JSON.stringify(result, null, 1),
    stdout: textTable(result),
  };
}
