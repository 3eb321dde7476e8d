-- GET /v0/status: the no-op route, the baseline of the hot-path benchmark.
--   wrk2 -t2 -c64 -d30s -R25000 -s status.lua --latency http://127.0.0.1:8080
-- Knobs (WRK_RATE, WRK_STATUS): see kvlab.lua.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local kvlab = dofile(dir .. "kvlab.lua")

kvlab.install("status")

wrk.method = "GET"
wrk.path = "/v0/status"
