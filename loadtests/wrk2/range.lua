-- GET /v0/entities?start=<k>&end=<k+RANGE_SIZE> at a random start inside the key space: each answer
-- streams RANGE_SIZE entries in chunks of "<key>\n<value>".
--   KEYS=1000000 RANGE_SIZE=100 wrk2 -t2 -c16 -d30s -R500 -s range.lua --latency http://127.0.0.1:8080
-- Knobs (KEYS, RANGE_SIZE, WRK_RATE, ...): see kvlab.lua.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local kvlab = dofile(dir .. "kvlab.lua")

local span = math.max(1, math.min(kvlab.range_size, kvlab.keys))
kvlab.install("range")

function request()
  local first = math.random(0, kvlab.keys - span)
  return wrk.format("GET", kvlab.range_path(first, first + span))
end
