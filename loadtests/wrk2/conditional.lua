-- Conditional updates over the filled key space, as k6/conditional.js makes them: GET a random
-- key's value and ETag, then PUT a new value with If-Match: that tag; a key the GET finds absent
-- (404) is created with If-None-Match: *. A 412 is an expected outcome (another writer changed the
-- key in between), which the lab counts apart as a refused update, not as an error: the updates
-- made are the 201s, the refused ones the 412s. The rate counts requests, two per update.
--
-- wrk does not tell a script which connection an answer came on, so a thread can pair a GET's
-- answer with the PUT that follows only when it has one connection: run it with -c equal to -t
-- (the lab does). A thread that finds a second connection stops wrk with a message, rather than
-- send tags to the wrong keys.
--   KEYS=1000000 wrk2 -t16 -c16 -d30s -R1000 -s conditional.lua --latency http://127.0.0.1:8080
-- Knobs (KEYS, VALUE_SIZE, REPLICAS, WRK_RATE, ...): see kvlab.lua.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local kvlab = dofile(dir .. "kvlab.lua")

local body
-- The key of the GET this thread's connection awaits the answer to; nil while a PUT is out.
local asked = nil
-- The PUT that the last GET's answer calls for: {key, condition header, its value}.
local update = nil
-- Whether this thread has had an answer yet, and its requests so far: before the first answer, a
-- third request() means a second connection (wrk calls the first thread's request() once more, to
-- check the script, before any connection opens).
local answered, sent = false, 0

-- The ETag of an answer, whatever case the server wrote the header's name in.
local function etag(headers)
  for name, value in pairs(headers) do
    if name:lower() == "etag" then return value end
  end
  return nil
end

local function stop(message)
  io.stderr:write("conditional.lua: " .. message .. "\n")
  os.exit(2)
end

kvlab.install("conditional", {
  expected = { [412] = true },
  response = function(status, headers)
    answered = true
    if asked == nil then return end -- a PUT's answer: 201 made, 412 refused, counted by status
    local key = asked
    asked = nil
    if status == 200 then
      local tag = etag(headers)
      if not tag then stop("a 200 without an ETag for " .. key .. ": the node does not serve conditional requests") end
      update = { key, "If-Match", tag }
    elseif status == 404 then
      update = { key, "If-None-Match", "*" }
    end -- another status: the GET failed, and counts as such; no update to make
  end,
})

function request()
  sent = sent + 1
  if sent > 2 and not answered then
    stop("this thread has more than one connection: run wrk with -c equal to -t")
  end
  if update then
    body = body or kvlab.value(kvlab.value_size)
    local key, header, tag = update[1], update[2], update[3]
    update, asked = nil, nil
    return wrk.format("PUT", kvlab.entity_path(key), { [header] = tag }, body)
  end
  asked = kvlab.key(kvlab.random_index())
  return wrk.format("GET", kvlab.entity_path(asked))
end
