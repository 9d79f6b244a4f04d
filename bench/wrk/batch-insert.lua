-- SOAP 1.1 LoginYInsertarEventos with N distinct events per request (default 100).
-- wrk -s batch-insert.lua http://127.0.0.1:PORT/service.asmx -- <seed> [N]
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")
local OP = "LoginYInsertarEventos"
local n = 100
local check = common.positive_ids(n)

common.install({
  headers = common.soap11_headers(OP),
  init = function(args)
    n = tonumber(args[2]) or 100
    check = common.positive_ids(n)
  end,
  body = function(i)
    local parts = {}
    local base = i * n -- request i carries events i*n+1 .. i*n+n: distinct across requests and runs
    for k = 1, n do parts[k] = "<pEvento>" .. common.event_xml(base + k) .. "</pEvento>" end
    return common.soap11(OP, "<Eventos>" .. table.concat(parts) .. "</Eventos>", true)
  end,
  check = function(body) return check(body) end,
})
