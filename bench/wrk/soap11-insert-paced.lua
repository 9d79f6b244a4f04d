-- SOAP 1.1 LoginYInsertarEvento at a constant overall rate, evenly spaced (wrk cannot pace and
-- wrk2 is not available; this emulates its schedule): request k of the thread is due at
-- t0 + k / rate, whichever connection is free takes the next slot, and delay() holds it until
-- then. A slot taken more than 1 ms late (no connection was free: the server fell behind) is
-- counted and printed as `lua_late: N`. Unlike wrk2, latency is measured from the actual send
-- (wrk's own clock), so lateness is not added to it: watch lua_late.
-- wrk -t1 -s soap11-insert-paced.lua http://127.0.0.1:PORT/service.asmx -- <seed> <rate req/s of the thread>
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")
local ffi = require("ffi")
local OP = "LoginYInsertarEvento"

ffi.cdef([[
  typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
  int clock_gettime(int clk_id, bench_timespec *tp);
]])
local ts = ffi.new("bench_timespec")
local CLOCK_MONOTONIC = 1
local function now_ms()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

local interval -- ms between two requests of this thread
local next_slot

common.install({
  headers = common.soap11_headers(OP),
  init = function(args)
    local rate = tonumber(args[2])
    assert(rate and rate > 0, "soap11-insert-paced.lua needs the rate (req/s) as its second argument")
    interval = 1000 / rate
    late = 0
  end,
  delay = function()
    local now = now_ms()
    if next_slot == nil then next_slot = now end
    local slot = next_slot
    next_slot = slot + interval
    local wait = slot - now
    if wait < -1 then late = late + 1 end
    if wait <= 0 then return 0 end
    return math.floor(wait + 0.5)
  end,
  body = function(i) return common.soap11(OP, common.event_xml(i), true) end,
  check = common.positive_id,
  report = function() return { "late" } end,
})
