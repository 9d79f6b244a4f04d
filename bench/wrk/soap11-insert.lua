-- SOAP 1.1 LoginYInsertarEvento, one distinct event per request (ceiling, peer and ours).
-- wrk -s soap11-insert.lua http://127.0.0.1:PORT/service.asmx -- <seed>
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")
local OP = "LoginYInsertarEvento"

common.install({
  headers = common.soap11_headers(OP),
  body = function(i) return common.soap11(OP, common.event_xml(i), true) end,
  check = common.positive_id,
})
