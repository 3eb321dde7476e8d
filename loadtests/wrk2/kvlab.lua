-- What the scripts of this folder share (put.lua, get.lua, range.lua, ...); they load it from their
-- own folder. It runs on wrk2 and on the original wrk (Debian's package): the same hooks (setup,
-- init, request, delay, response, done).
--
-- Environment (the same names drive the k6 scenarios). KEYS, KEY_PREFIX, VALUE_SIZE, REPLICAS and
-- RANGE_SIZE not set in the environment take their defaults from the lab's defaults file,
-- loadtests/lab/defaults.env (KVLAB_DEFAULTS names another; in Kubernetes the file reaches the pod
-- with the scripts), where each is described; with all of them set, no file is needed:
--   KEYS        size of the key space: keys are KEY_PREFIX .. 10-digit index, 0..KEYS-1
--   KEY_PREFIX  must be URL-safe, it goes into the URL as it is
--   VALUE_SIZE  bytes in every PUT body
--   REPLICAS    ack/from appended as &replicas=ack/from; empty: the server's default
--   RANGE_SIZE  keys per range read
--   MULTIGET_SIZE  keys per multi-get (multiget.lua), TTL the time to live of ttl.lua's writes: read
--               by those scripts with M.knob, from the environment or the same defaults file
--   WRK_RATE    plain wrk only: pace requests to this total rate (requests/s) with the delay() hook;
--               WRK_THREADS must then equal -t. wrk2 paces itself with -R: leave WRK_RATE unset.
--   WRK_STATUS  1: count answers by status code (a response() hook; costs a little CPU per request)
--   WRK_SERIES_T0_MS  wall-clock ms (since the epoch) of second 0: count answers, and those of status
--               400 or more, per second since then (the same response() hook; per thread, added up
--               in done()); wrk gives Lua no latency per request, so there is none per second
-- done() prints the latency percentiles, once readable and once as one line of JSON after the
-- marker "KVLAB-WRK-JSON " for the lab's runner, with the latency histogram (M.histogram) and the
-- answers per second (M.per_second).
local M = {}

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local defaults_file = os.getenv("KVLAB_DEFAULTS") or (here .. "../lab/defaults.env")

-- NAME=value lines of the defaults file ("#" comments); nil when it cannot be read.
local function read_defaults(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local values = {}
  for line in f:lines() do
    local name, value = line:match("^%s*([A-Z0-9_]+)=(%S*)%s*$")
    if name then values[name] = value end
  end
  f:close()
  return values
end

local defaults = read_defaults(defaults_file)

-- A knob: the environment's value, else the defaults file's.
local function knob(name)
  local raw = os.getenv(name)
  if raw ~= nil and raw ~= "" then return raw end
  if defaults == nil then
    error(name .. " is not set and the defaults file " .. defaults_file .. " cannot be read (KVLAB_DEFAULTS)")
  end
  if defaults[name] == nil then error(name .. " is not set and " .. defaults_file .. " has no default for it") end
  return defaults[name]
end
M.knob = knob

-- A number from the environment, else default (the lab's own settings of wrk, not knobs).
local function env_number(name, default)
  local raw = os.getenv(name)
  if raw == nil or raw == "" then return default end
  local v = tonumber(raw)
  if v == nil then error(name .. " must be a number, got '" .. raw .. "'") end
  return v
end

local function knob_number(name)
  local v = tonumber(knob(name))
  if v == nil then error(name .. " must be a number, got '" .. knob(name) .. "'") end
  return v
end

M.keys = math.floor(knob_number("KEYS"))
M.prefix = knob("KEY_PREFIX")
M.value_size = math.floor(knob_number("VALUE_SIZE"))
M.range_size = math.floor(knob_number("RANGE_SIZE"))
local replicas = os.getenv("REPLICAS") or (defaults and defaults.REPLICAS) or ""
if replicas ~= "" and not replicas:match("^%d+/%d+$") then
  error("REPLICAS must look like ack/from, got '" .. replicas .. "'")
end
M.replicas = replicas
M.replicas_param = replicas ~= "" and ("&replicas=" .. replicas) or ""

function M.key(i)
  return string.format("%s%010d", M.prefix, i)
end

function M.random_index()
  return math.random(0, M.keys - 1)
end

function M.entity_path(key)
  return "/v0/entity?id=" .. key .. M.replicas_param
end

function M.range_path(first, last)
  return "/v0/entities?start=" .. M.key(first) .. "&end=" .. M.key(last)
end

-- A fixed-size ASCII body, random once per thread.
function M.value(size)
  local alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
  local parts = {}
  for i = 1, size do
    local j = math.random(1, #alphabet)
    parts[i] = alphabet:sub(j, j)
  end
  return table.concat(parts)
end

-- This process's id (0 where LuaJIT's ffi is missing).
function M.pid()
  local ok, pid = pcall(function()
    local ffi = require("ffi")
    pcall(ffi.cdef, "int getpid(void);")
    return ffi.C.getpid()
  end)
  return ok and tonumber(pid) or 0
end

-- A function that reads a clock in ms (0: CLOCK_REALTIME, since the epoch; 1: CLOCK_MONOTONIC).
function M.clock_ms(clk)
  local ffi = require("ffi")
  pcall(ffi.cdef, "typedef struct { long tv_sec; long tv_nsec; } kvlab_timespec;"
    .. " int clock_gettime(int clk, kvlab_timespec *ts);")
  local ts = ffi.new("kvlab_timespec")
  return function()
    ffi.C.clock_gettime(clk, ts)
    return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
  end
end

-- Installs the hooks every script has: setup (numbers the threads), init (seeds the random
-- generator), done (prints percentiles), and, when asked for, delay (pacing) and response (statuses).
-- hooks, optional: hooks.response(status, headers, body), the script's own look at every answer
-- (called first); hooks.expected, statuses over 399 that are an outcome of the workload rather
-- than an error ({[412] = true}), left out of the per-second errors. (wrk's own summary counts
-- them as errors all the same: the lab takes them out by their status counts.)
function M.install(scenario, hooks)
  local threads = {}

  _G.setup = function(thread)
    threads[#threads + 1] = thread
    thread:set("kvlab_thread", #threads)
  end

  _G.init = function(args)
    local n = kvlab_thread or 0
    -- The process id too: the lab starts one wrk per node at the same moment, and without it they
    -- would all draw the same keys in the same order.
    math.randomseed(os.time() * 1000 + M.pid() * 104729 + n * 7919 + math.floor(os.clock() * 1e6))
  end

  local rate = env_number("WRK_RATE", 0)
  if rate > 0 then
    local now_ms = M.clock_ms(1)
    local interval_ms = 1000 / (rate / env_number("WRK_THREADS", 1))
    local next_ms = nil
    -- Each request of this thread gets the next slot of a fixed schedule; when the server falls
    -- behind, the overdue requests go at once (the schedule is not moved), as wrk2 does. Unlike
    -- wrk2, the latency is still measured from the moment a request is sent.
    _G.delay = function()
      local now = now_ms()
      if next_ms == nil then next_ms = now end
      next_ms = next_ms + interval_ms
      local wait = next_ms - now
      if wait <= 0 then return 0 end
      return math.floor(wait)
    end
  end

  local by_status = os.getenv("WRK_STATUS") == "1"
  local series_t0 = env_number("WRK_SERIES_T0_MS", 0)
  local on_response = hooks and hooks.response
  local expected = (hooks and hooks.expected) or {}
  if by_status or series_t0 > 0 or on_response then
    kvlab_status = {}
    -- Per second since series_t0, in tables of this thread that done() adds up: a clock read and
    -- two table updates per answer.
    kvlab_second_requests, kvlab_second_errors = {}, {}
    local now_ms = series_t0 > 0 and M.clock_ms(0) or nil
    _G.response = function(status, headers, body)
      if on_response then
        on_response(status, headers, body)
      end
      if by_status then
        kvlab_status[status] = (kvlab_status[status] or 0) + 1
      end
      if now_ms then
        local second = math.floor((now_ms() - series_t0) / 1000)
        kvlab_second_requests[second] = (kvlab_second_requests[second] or 0) + 1
        if status > 399 and not expected[status] then
          kvlab_second_errors[second] = (kvlab_second_errors[second] or 0) + 1
        end
      end
    end
  end

  _G.done = function(summary, latency, requests)
    M.report(scenario, summary, latency, threads, rate, series_t0)
  end
end

-- The threads' answers per second as JSON, {"t0_ms":...,"requests":[...],"errors":[...]} with one
-- entry per second from second 0 to the last one with an answer; nil when they were not counted.
function M.per_second(threads, t0_ms)
  if t0_ms <= 0 then return nil end
  local requests, errors, last = {}, {}, -1
  for _, t in ipairs(threads) do
    for name, into in pairs({ kvlab_second_requests = requests, kvlab_second_errors = errors }) do
      local counts = t:get(name)
      if type(counts) == "table" then
        for second, n in pairs(counts) do
          if second >= 0 then
            into[second] = (into[second] or 0) + n
            if second > last then last = second end
          end
        end
      end
    end
  end
  local r, e = {}, {}
  for second = 0, last do
    r[#r + 1] = string.format("%d", requests[second] or 0)
    e[#e + 1] = string.format("%d", errors[second] or 0)
  end
  return string.format('{"t0_ms":%.0f,"requests":[%s],"errors":[%s]}', t0_ms, table.concat(r, ","),
    table.concat(e, ","))
end

-- Percentiles of the table, and HdrHistogram's ticks (five per halving of 1-p) for the spectrum.
local TABLE = { 50, 75, 90, 99, 99.9, 99.99, 99.999, 100 }

local function spectrum_ticks()
  local ps = { 0, 10, 20, 30, 40 }
  for half = 1, 17 do
    local from = 1 - 2 ^ -half
    local step = 2 ^ -half / 2 / 5
    for i = 0, 4 do
      local p = (from + i * step) * 100
      if p <= 99.999 then ps[#ps + 1] = p end
    end
  end
  ps[#ps + 1] = 100
  return ps
end

local function fmt_ms(us)
  if us < 1000 then return string.format("%.2fus", us) end
  if us < 1e6 then return string.format("%.2fms", us / 1000) end
  return string.format("%.2fs", us / 1e6)
end

local function json_number(v)
  if v ~= v or v == math.huge or v == -math.huge then return "null" end
  return string.format("%.10g", v)
end

-- wrk's percentile(100) is 0: the ends of the distribution are its min and max.
local function percentile_us(latency, p)
  if p <= 0 then return latency.min end
  if p >= 100 then return latency.max end
  return latency:percentile(p)
end

-- The latency histogram as JSON, [[upper edge in µs, count], ...] ascending, so the lab can add up
-- the histograms of several wrk processes (one per node) into the exact distribution of a whole
-- phase. Latencies from 10 ms up are counted in buckets of four significant digits (10 µs wide
-- from 10 ms, 100 µs from 100 ms), each named by its upper edge: at most 0.1 % above a latency it
-- counts, never below. nil where the stats object cannot be walked: latency(i) is the original
-- wrk's (4.x: the i-th non-empty bucket's value and count); wrk2's stats have no such call.
function M.histogram(latency)
  local ok, buckets = pcall(function()
    local out, edge, count = {}, nil, 0
    for i = 1, #latency do
      local v, c = latency(i)
      local step = v < 10000 and 1 or 10 ^ (math.floor(math.log10(v)) - 3)
      local e = math.ceil(v / step) * step
      if e ~= edge then
        if edge then out[#out + 1] = string.format("[%d,%d]", edge, count) end
        edge, count = e, 0
      end
      count = count + c
    end
    if edge then out[#out + 1] = string.format("[%d,%d]", edge, count) end
    return out
  end)
  if not ok then return nil end
  return "[" .. table.concat(buckets, ",") .. "]"
end

function M.report(scenario, summary, latency, threads, rate, series_t0)
  io.write("  Latency Distribution (kvlab done() hook)\n")
  for _, p in ipairs(TABLE) do
    io.write(string.format("%8.3f%%  %10s\n", p, fmt_ms(percentile_us(latency, p))))
  end
  io.write("\n  Detailed Percentile spectrum:\n")
  io.write(string.format("%12s %12s %16s\n", "Value(ms)", "Percentile", "1/(1-Percentile)"))
  local spectrum = {}
  for _, p in ipairs(spectrum_ticks()) do
    local us = percentile_us(latency, p)
    local inv = (p < 100) and string.format("%16.2f", 1 / (1 - p / 100)) or string.format("%16s", "inf")
    io.write(string.format("%12.3f %12.6f %s\n", us / 1000, p / 100, inv))
    spectrum[#spectrum + 1] = "[" .. json_number(p / 100) .. "," .. json_number(us / 1000) .. "]"
  end

  local statuses = {}
  for _, t in ipairs(threads) do
    local counts = t:get("kvlab_status")
    if type(counts) == "table" then
      for code, n in pairs(counts) do statuses[code] = (statuses[code] or 0) + n end
    end
  end
  local status_json = {}
  for code, n in pairs(statuses) do status_json[#status_json + 1] = string.format('"%d":%d', code, n) end

  local table_json = {}
  for _, p in ipairs(TABLE) do
    local name = (p == 100) and "p100" or ("p" .. string.format("%g", p))
    table_json[#table_json + 1] = string.format('"%s":%s', name, json_number(percentile_us(latency, p) / 1000))
  end
  local e = summary.errors
  io.write("KVLAB-WRK-JSON {"
    .. '"scenario":"' .. scenario .. '"'
    .. ',"requests":' .. summary.requests
    .. ',"duration_s":' .. json_number(summary.duration / 1e6)
    .. ',"bytes_received":' .. summary.bytes
    .. ',"threads":' .. #threads
    .. ',"paced_rate":' .. json_number(rate)
    .. string.format(',"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}',
      e.connect, e.read, e.write, e.status, e.timeout)
    .. ',"status_counts":{' .. table.concat(status_json, ",") .. "}"
    .. ',"latency":{"unit":"ms","min":' .. json_number(latency.min / 1000)
    .. ',"mean":' .. json_number(latency.mean / 1000)
    .. ',"stdev":' .. json_number(latency.stdev / 1000)
    .. ',"max":' .. json_number(latency.max / 1000)
    .. ',"percentiles":{' .. table.concat(table_json, ",") .. "}"
    .. ',"spectrum":[' .. table.concat(spectrum, ",") .. "]}"
    .. ',"histogram_us":' .. (M.histogram(latency) or "null")
    .. ',"per_second":' .. (M.per_second(threads, series_t0 or 0) or "null")
    .. "}\n")
end

return M
