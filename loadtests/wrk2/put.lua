-- PUT /v0/entity?id=<random key> with a fixed-size body, as the course's put.lua did.
--   wrk2 -t4 -c64 -d30s -R15000 -s put.lua --latency http://127.0.0.1:8080
--   KEYS=1000000 VALUE_SIZE=1024 wrk -t2 -c64 -d30s -s put.lua http://127.0.0.1:8080   (Debian's wrk)
-- Knobs (KEYS, VALUE_SIZE, REPLICAS, WRK_RATE, ...): see kvlab.lua.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local kvlab = dofile(dir .. "kvlab.lua")

local body
kvlab.install("put")

function request()
  body = body or kvlab.value(kvlab.value_size)
  return wrk.format("PUT", kvlab.entity_path(kvlab.key(kvlab.random_index())), nil, body)
end
