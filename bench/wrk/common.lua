-- Shared by the bench/wrk/*.lua scripts (loaded with dofile from the script's own folder).
--
-- Every request carries a distinct event: a per-run counter goes into Codigo and into the
-- millisecond fraction of FechaHoraEvento (and picks one of 5000 Dominios), so the gateway's
-- resent-event dedupe never answers without storing. Each Dominio's FechaHoraEvento moves one
-- second forward per report, as a device's clock does: the store's latest report per vehicle
-- (last_reports) then changes with every event, as in production (with a fixed time it was
-- written once and every later event left it alone). The counter starts at the seed given as the
-- first script argument (`wrk ... URL -- <seed> [...]`); bench/compare.ts gives every run
-- (warm-up included) its own seed, 10^8 apart.
--
-- response() checks the body of every 2xx answer with the script's check(body) (for the insert
-- rows: it holds a positive id) and done() prints `lua_checked: N` and `lua_bad: N` (answers
-- that failed the check; non-2xx answers are left to wrk's own "Non-2xx" count).

local M = {}

M.NS = "http://tempuri.org/"
M.USER = "bench"
M.PASSWORD = "bench-secret"

local SOAP11_NS = "http://schemas.xmlsoap.org/soap/envelope/"
local SOAP12_NS = "http://www.w3.org/2003/05/soap-envelope"
local format = string.format

-- The event fields of LoginYInsertarEvento / InsertarEvento / pEvento, in wire order, for event i.
-- `between` is inserted between Velocidad and the dates (InsertarEvento's Rumbo). Built by plain
-- concatenation of constant pieces: the load generator's Lua must stay cheap next to the server.
local E1 = "<Dominio>AB"
local E2 = "CD</Dominio><NroSerie>SN</NroSerie><Codigo>"
local E3 = "</Codigo><Latitud>-34.6037221</Latitud><Longitud>-58.3815704</Longitud><Altitud>25</Altitud><Velocidad>42.5</Velocidad>"
local E5 = "-03:00</FechaHoraEvento><FechaHoraRecepcion>2026-11-22T09:00:00-03:00</FechaHoraRecepcion>"
local MS = {}
for k = 0, 999 do MS[k] = format("%03d", k) end
local VEHICLES = 5000

-- The seconds of event i's FechaHoraEvento: vehicle i % 5000's report number floor(i / 5000),
-- counted from 2026-11-22 08:59:30. Formatted once per 5000 events: the load generator stays cheap.
local T0 = os.time({ year = 2026, month = 11, day = 22, hour = 8, min = 59, sec = 30 })
local secondsOf, secondsText, secondsForm = -1, "", ""
local function advance(i)
  local n = math.floor(i / VEHICLES)
  if n ~= secondsOf then
    secondsOf, secondsText = n, os.date("%Y-%m-%dT%H:%M:%S", T0 + n)
    secondsForm = (secondsText:gsub(":", "%%3A"))
  end
end

function M.event_xml(i, between)
  advance(i)
  return E1 .. format("%d", i % VEHICLES) .. E2 .. format("%d", i) .. E3 .. (between or "")
    .. "<FechaHoraEvento>" .. secondsText .. "." .. MS[i % 1000] .. E5
end

-- The same event as an application/x-www-form-urlencoded body (HTTP POST binding).
local F1 = "SystemUser=" .. M.USER .. "&Password=" .. M.PASSWORD .. "&Dominio=AB"
local F2 = "CD&NroSerie=SN&Codigo="
local F3 = "&Latitud=-34.6037221&Longitud=-58.3815704&Altitud=25&Velocidad=42.5&FechaHoraEvento="
local F4 = "-03%3A00&FechaHoraRecepcion=2026-11-22T09%3A00%3A00-03%3A00"

function M.event_form(i)
  advance(i)
  return F1 .. format("%d", i % VEHICLES) .. F2 .. format("%d", i) .. F3 .. secondsForm .. "." .. MS[i % 1000] .. F4
end

local function envelope(ns, op, inner, credentials)
  local creds = ""
  if credentials then
    creds = "<SystemUser>" .. M.USER .. "</SystemUser><Password>" .. M.PASSWORD .. "</Password>"
  end
  return '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="' .. ns .. '"><soap:Body><'
    .. op .. ' xmlns="' .. M.NS .. '">' .. creds .. inner .. "</" .. op .. "></soap:Body></soap:Envelope>"
end

-- SOAP 1.1 / 1.2 envelopes; credentials = true puts SystemUser and Password first.
function M.soap11(op, inner, credentials) return envelope(SOAP11_NS, op, inner, credentials) end
function M.soap12(op, inner, credentials) return envelope(SOAP12_NS, op, inner, credentials) end

function M.soap11_headers(op)
  return { ["Content-Type"] = "text/xml; charset=utf-8", ["SOAPAction"] = '"' .. M.NS .. op .. '"' }
end
function M.soap12_headers(op)
  return { ["Content-Type"] = 'application/soap+xml; charset=utf-8; action="' .. M.NS .. op .. '"' }
end

-- True when the body holds an element whose text is a positive integer: the id in SOAP
-- `<...Result>id</...Result>` and HTTP `<int xmlns="...">id</int>`; a negative code, a fault or an
-- empty answer fail. (The only integer-valued element of these answers is the result.)
local find = string.find
function M.positive_id(body)
  return find(body, ">[1-9]%d*</") ~= nil
end

-- True when the body holds exactly n <int> items and all are positive ids (LoginYInsertarEventos).
function M.positive_ids(n)
  return function(body)
    local count = 0
    for v in body:gmatch("<int>(%-?%d+)</int>") do
      if tonumber(v) <= 0 then return false end
      count = count + 1
    end
    return count == n
  end
end

-- Installs wrk's callbacks. opts.headers: request headers (POST); opts.init(args): optional, runs
-- in each thread with the script arguments; opts.body(i): the body of request number i;
-- opts.check(body): true when a 2xx answer is good; opts.delay(): optional, milliseconds to wait
-- before each request (wrk then calls it before every request of every connection);
-- opts.report(): optional, extra `name: value` lines for done(), from each thread's globals
-- (returns a list of global names to sum over the threads).
function M.install(opts)
  wrk.method = "POST"
  for k, v in pairs(opts.headers or {}) do wrk.headers[k] = v end

  local threads = {}

  -- main state, once per thread before its init(): numbers the threads
  function setup(thread)
    thread:set("thread_index", #threads)
    table.insert(threads, thread)
  end

  -- thread state
  function init(args)
    counter = (tonumber(args[1]) or 0) + (thread_index or 0) * 10000000
    checked = 0
    bad = 0
    if opts.init then opts.init(args) end
  end

  -- wrk.format() rebuilds the whole request head each call; the head only depends on the body's
  -- length (Content-Length), so build it once per length and prepend it.
  local heads = {}
  function request()
    counter = counter + 1
    local body = opts.body(counter)
    local n = #body
    local head = heads[n]
    if head == nil then
      local full = wrk.format(nil, nil, nil, body)
      head = full:sub(1, #full - n)
      heads[n] = head
    end
    return head .. body
  end

  if opts.delay then
    function delay() return opts.delay() end
  end

  function response(status, headers, body)
    if status >= 200 and status < 300 then
      checked = checked + 1
      if not opts.check(body) then bad = bad + 1 end
    end
  end

  -- main state, after the run
  function done(summary, latency, requests)
    local c, b = 0, 0
    for _, t in ipairs(threads) do
      c = c + t:get("checked")
      b = b + t:get("bad")
    end
    io.write(format("lua_checked: %d\nlua_bad: %d\n", c, b))
    for _, name in ipairs(opts.report and opts.report() or {}) do
      local sum = 0
      for _, t in ipairs(threads) do sum = sum + (t:get(name) or 0) end
      io.write(format("lua_%s: %d\n", name, sum))
    end
  end
end

return M
