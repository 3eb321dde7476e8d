-- PUT /v0/entity?id=<random key>&ttl=<TTL> with a fixed-size body: expiring writes, over a key
-- space of their own (KEY_PREFIX .. "ttl-" .. index), so the filled keys stay as they are. A wrk
-- process sends one kind of request, and wrk counts a 404 as an error: the GETs of expiring keys,
-- which answer 404 once expired, are k6's (loadtests/k6/ttl.js).
--   TTL=30 wrk2 -t2 -c64 -d30s -R2000 -s ttl.lua --latency http://127.0.0.1:8080
-- Knobs (KEYS, VALUE_SIZE, REPLICAS, TTL, WRK_RATE, ...): see kvlab.lua.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local kvlab = dofile(dir .. "kvlab.lua")

local ttl = math.floor(tonumber(kvlab.knob("TTL")) or 0)
if ttl < 1 then error("TTL must be a whole number of seconds, at least 1") end
local body
kvlab.install("ttl")

function request()
  body = body or kvlab.value(kvlab.value_size)
  local key = string.format("%sttl-%010d", kvlab.prefix, kvlab.random_index())
  return wrk.format("PUT", kvlab.entity_path(key) .. "&ttl=" .. ttl, nil, body)
end
