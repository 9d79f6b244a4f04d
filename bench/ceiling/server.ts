/**
 * The machine's ceiling for our request shape: a bare uWebSockets.js server that reads the whole
 * request body (onData until the last chunk) and answers every POST with one fixed SOAP 1.1
 * LoginYInsertarEvento reply of the same size and headers as the gateway's (Content-Type
 * text/xml; charset=utf-8, a 5-digit id). No parsing, no storage: what uWS on one core can do.
 *
 * Run by bench/compare.ts in its own process: listens on 127.0.0.1 (PORT, default 0 = any free
 * port) and prints one JSON line `{"url": ...}` on stdout when ready. Exits on SIGTERM/SIGINT.
 */
import { createRequire } from 'node:module';
import uWS from 'uWebSockets.js';

const HOST = '127.0.0.1';
const PORT = Number(process.env.PORT ?? 0);

/** Byte for byte what the gateway answers to SOAP 1.1 LoginYInsertarEvento, with id 12345. */
const REPLY = Buffer.from(
  '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema"><soap:Body><LoginYInsertarEventoResponse xmlns="http://tempuri.org/"><LoginYInsertarEventoResult>12345</LoginYInsertarEventoResult></LoginYInsertarEventoResponse></soap:Body></soap:Envelope>',
  'utf8',
);

// The package silently falls back to a slow node:http emulation when the native binary fails to
// load: a ceiling measured on that would be meaningless, so refuse to run.
const nativeLoaded = Object.keys(createRequire(import.meta.url).cache).some((k) => /uws_[^/\\]+\.node$/.test(k));
if (!nativeLoaded) {
  console.error('ceiling: uWebSockets.js native binary not loaded (fallback emulation); refusing to measure');
  process.exit(2);
}

let bodyBytes = 0;
const app = uWS.App();
app.post('/*', (res) => {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  res.onData((chunk, isLast) => {
    bodyBytes += chunk.byteLength; // the chunk is only read, never kept (it is detached afterwards)
    if (isLast && !aborted) {
      res.writeStatus('200 OK').writeHeader('Content-Type', 'text/xml; charset=utf-8').end(REPLY);
    }
  });
});
app.any('/*', (res) => {
  res.writeStatus('404 Not Found').end();
});

app.listen(HOST, PORT, (token) => {
  if (!token) {
    console.error(`ceiling: cannot listen on ${HOST}:${PORT}`);
    process.exit(1);
  }
  const port = uWS.us_socket_local_port(token);
  console.log(JSON.stringify({ url: `http://${HOST}:${port}/service.asmx`, replyBytes: REPLY.length }));
});

const stop = (): void => {
  console.error(`ceiling: read ${bodyBytes} request body bytes`);
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
