-- SOAP 1.1 InsertarEvento on an existing session: the caller logs in once and passes the cookie.
-- wrk -s session-insert.lua http://127.0.0.1:PORT/service.asmx -- <seed> 'ASP.NET_SessionId=...'
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")
local OP = "InsertarEvento"

common.install({
  headers = common.soap11_headers(OP),
  init = function(args)
    assert(args[2], "session-insert.lua needs the session cookie as its second argument")
    wrk.headers["Cookie"] = args[2]
  end,
  body = function(i) return common.soap11(OP, common.event_xml(i, "<Rumbo>90</Rumbo>"), false) end,
  check = common.positive_id,
})
