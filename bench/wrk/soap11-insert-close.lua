-- SOAP 1.1 LoginYInsertarEvento with `Connection: close`: every request on a new connection, so
-- over TLS every request is a full handshake (the TLS row's "new connections per second").
-- wrk -s soap11-insert-close.lua https://127.0.0.1:PORT/service.asmx -- <seed>
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")
local OP = "LoginYInsertarEvento"
local headers = common.soap11_headers(OP)
headers["Connection"] = "close"

common.install({
  headers = headers,
  body = function(i) return common.soap11(OP, common.event_xml(i), true) end,
  check = common.positive_id,
})
