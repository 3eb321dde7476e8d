-- POST /v0/entities/get with MULTIGET_SIZE random keys of the filled key space in the body, one
-- per line, as k6/multiget.js sends it: answered in the course's chunked range format, the latency
-- the time to the last byte of the answer. Keys read per second are the rate times MULTIGET_SIZE
-- (the lab reports keys_per_request and keys_rate).
--   KEYS=1000000 MULTIGET_SIZE=100 wrk2 -t2 -c16 -d30s -R50 -s multiget.lua --latency http://127.0.0.1:8080
-- Knobs (KEYS, MULTIGET_SIZE, REPLICAS, WRK_RATE, ...): see kvlab.lua.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local kvlab = dofile(dir .. "kvlab.lua")

local size = math.floor(tonumber(kvlab.knob("MULTIGET_SIZE")) or 0)
if size < 1 then error("MULTIGET_SIZE must be at least 1, got '" .. kvlab.knob("MULTIGET_SIZE") .. "'") end
local path = "/v0/entities/get" .. (kvlab.replicas ~= "" and ("?replicas=" .. kvlab.replicas) or "")
local headers = { ["Content-Type"] = "text/plain" }
kvlab.install("multiget")

function request()
  local keys = {}
  for i = 1, size do
    keys[i] = kvlab.key(kvlab.random_index())
  end
  keys[size + 1] = ""
  return wrk.format("POST", path, headers, table.concat(keys, "\n"))
end
