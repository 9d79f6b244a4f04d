-- Failed logins over HTTP POST Login, one per request (bench/lockout-memory.ts).
-- wrk -s failed-logins.lua http://127.0.0.1:PORT/service.asmx/Login -- <seed> <mode>
--   mode "unknown":   a made-up SystemUser per request (costs the gateway a counter, no memory);
--   mode "addresses": the real SystemUser `bench` with a wrong password, each request from another
--                     client address (X-Forwarded-For, believed from loopback by default).
local threads = {}
function setup(thread)
  thread:set("thread_index", #threads)
  table.insert(threads, thread)
end

function init(args)
  counter = (tonumber(args[1]) or 0) + (thread_index or 0) * 10000000
  mode = args[2] or "unknown"
end

local headers = { ["Content-Type"] = "application/x-www-form-urlencoded" }
function request()
  counter = counter + 1
  if mode == "unknown" then
    return wrk.format("POST", nil, headers, "SystemUser=ghost-" .. counter .. "&Password=guess")
  end
  local a = counter % 16777216
  headers["X-Forwarded-For"] = string.format("10.%d.%d.%d", math.floor(a / 65536), math.floor(a / 256) % 256, a % 256)
  return wrk.format("POST", nil, headers, "SystemUser=bench&Password=wrong-" .. counter)
end
