-- SOAP 1.2 LoginYInsertarEvento, one distinct event per request.
-- wrk -s soap12-insert.lua http://127.0.0.1:PORT/service.asmx -- <seed>
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")
local OP = "LoginYInsertarEvento"

common.install({
  headers = common.soap12_headers(OP),
  body = function(i) return common.soap12(OP, common.event_xml(i), true) end,
  check = common.positive_id,
})
