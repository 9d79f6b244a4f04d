-- SOAP 1.1 LoginYObtenerComando; the caller queues one command first, so every answer is a Comando.
-- wrk -s obtener-comando.lua http://127.0.0.1:PORT/service.asmx -- <seed>
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")
local OP = "LoginYObtenerComando"
local body = common.soap11(OP, "", true)

common.install({
  headers = common.soap11_headers(OP),
  body = function() return body end,
  check = function(b) return b:find("<CMD>", 1, true) ~= nil end,
})
