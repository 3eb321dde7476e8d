-- The fill on wrk: PUTs every key of [FILL_START, FILL_START+KEYS) exactly once, as fast as the
-- connections allow, in a scattered order: index i goes to key FILL_START + (a*i + c) mod KEYS with
-- gcd(a, KEYS) = 1 (a permutation), so the store sees random-order inserts as real clients give,
-- not sequential keys. Thread t of T (of part p of P wrk processes) takes i = p*T + t - 1,
-- then every (P*T)-th after it. Values differ between keys (a pool of 64 random bodies per thread,
-- chosen by index): identical values would compress to nothing and make disk figures lie.
--   KEYS=100000 FILL_START=0 WRK_THREADS=2 WRK_STATUS=1 WRK_FILL_DONE_DIR=/tmp/done \
--     wrk -t2 -c32 -d600s -s fill.lua http://127.0.0.1:8080
-- wrk cannot end itself before -d: when a thread has its answer to every PUT it sent it writes the
-- file WRK_FILL_DONE_DIR/part<p>-thread<t> and stops; the caller waits for every thread's file and
-- sends wrk SIGINT, after which it prints its summary and done()'s JSON as always. Until a thread's
-- last answer is in, its spare connections send GET /v0/status (wrk has every connection send).
-- A PUT is stored when it is answered 201; /v0/status answers 200, so an answer that is not 200 is
-- a PUT's. Knobs: WRK_THREADS (= -t, required), WRK_FILL_PART/WRK_FILL_PARTS (0/1), and kvlab.lua's.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local kvlab = dofile(dir .. "kvlab.lua")

local POOL = 64

-- The permutation's multiplier and offset for n keys; lab/fillorder.py mirrors this.
function kvlab.fill_order(n)
  local function gcd(x, y)
    while y ~= 0 do x, y = y, x % y end
    return x
  end
  local a = math.floor(n * 0.6180339887) + 1
  while gcd(a, n) ~= 1 do a = a + 1 end
  return a, math.floor(n * 0.3819660113) % n
end

local first = math.floor(tonumber(os.getenv("FILL_START") or "0") or 0)
local part = math.floor(tonumber(os.getenv("WRK_FILL_PART") or "0") or 0)
local parts = math.floor(tonumber(os.getenv("WRK_FILL_PARTS") or "1") or 1)
local threads = tonumber(os.getenv("WRK_THREADS") or "")
local done_dir = os.getenv("WRK_FILL_DONE_DIR") or ""
if not threads then error("WRK_THREADS must be wrk's -t: each thread takes its share of the keys") end
if done_dir == "" then error("WRK_FILL_DONE_DIR must name a directory: each thread marks its end there") end
-- a*i stays an exact integer in a double up to 2^53.
if kvlab.keys > 2 ^ 26 then error("KEYS above 2^26 would lose precision in the permutation") end

kvlab.install("fill")
local count_status = response -- kvlab.lua's (statuses, per-second counts), when asked for

-- wrk calls the first thread's request() once before it runs, to see whether it pipelines, and
-- throws the request away: that call must not take a key.
local verify_call = false
local base_init = init
function init(args)
  base_init(args)
  verify_call = (kvlab_thread or 1) == 1
end

local a, c = kvlab.fill_order(kvlab.keys)
local stride, next_i, answered, mine, marked
local pool = {}

local function share(offset)
  if offset >= kvlab.keys then return 0 end
  return math.floor((kvlab.keys - 1 - offset) / stride) + 1
end

local function thread_init()
  local t = (kvlab_thread or 1) - 1
  stride = parts * threads
  next_i = part * threads + t
  mine = share(next_i)
  answered = 0
  for j = 1, POOL do pool[j] = kvlab.value(kvlab.value_size) end
end

function request()
  if not stride then thread_init() end
  if verify_call then
    verify_call = false
    return wrk.format("GET", "/v0/status")
  end
  if next_i < kvlab.keys then
    local i = next_i
    next_i = next_i + stride
    local index = first + (a * i + c) % kvlab.keys
    return wrk.format("PUT", kvlab.entity_path(kvlab.key(index)), nil, pool[index % POOL + 1])
  end
  return wrk.format("GET", "/v0/status")
end

function response(status, headers, body)
  if count_status then count_status(status, headers, body) end
  if not stride then thread_init() end
  if status ~= 200 then answered = answered + 1 end
  if not marked and answered >= mine and next_i >= kvlab.keys then
    marked = true
    local name = string.format("%s/part%d-thread%d", done_dir, part, kvlab_thread or 1)
    local f = assert(io.open(name, "w"))
    f:write(string.format("%d\n", answered))
    f:close()
    wrk.thread:stop()
  end
end
