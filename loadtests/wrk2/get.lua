-- GET /v0/entity?id=<random key> over a filled key space, as the course's get.lua did.
--   wrk2 -t4 -c64 -d30s -R25000 -s get.lua --latency http://127.0.0.1:8080
--   KEYS=1000000 wrk -t2 -c64 -d30s -s get.lua http://127.0.0.1:8080   (Debian's wrk)
-- A key that was never written answers 404, which wrk counts as a "Non-2xx or 3xx" error.
-- Knobs (KEYS, REPLICAS, WRK_RATE, ...): see kvlab.lua.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local kvlab = dofile(dir .. "kvlab.lua")

kvlab.install("get")

function request()
  return wrk.format("GET", kvlab.entity_path(kvlab.key(kvlab.random_index())))
end
