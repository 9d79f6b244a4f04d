-- HTTP POST (form) LoginYInsertarEvento, one distinct event per request.
-- wrk -s form-insert.lua http://127.0.0.1:PORT/service.asmx/LoginYInsertarEvento -- <seed>
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

common.install({
  headers = { ["Content-Type"] = "application/x-www-form-urlencoded" },
  body = function(i) return common.event_form(i) end,
  check = common.positive_id,
})
