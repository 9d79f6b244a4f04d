/**
 * What the gateway's Content-Length check costs per request: `lengthIsAmbiguous` walks every
 * header line through uWS's `req.forEach` (a second Content-Length line is invisible to
 * `getHeader`). Measured inside a real uWS handler on the head a .NET ASMX client sends (9 lines),
 * against forEach with an empty callback and one `getHeader` call, and set beside the ~150 µs of CPU a SOAP insert costs
 * (bench/LOG.md, 2026-11-22: 6,325 req/s on 94% of the main thread).
 *
 *   npx tsx bench/header-scan.ts [--requests=200] [--repeat=2000]
 *
 * Each request's handler runs both operations `repeat` times in a row (the request object is only
 * valid inside the handler); the figure is total time over total calls. The answer of the check
 * is verified (false for this head, true with a conflicting second Content-Length) before timing.
 */
import net from 'node:net';
import { lengthIsAmbiguous } from '../gateway/transport/request-headers.js';
import { uWS, type us_listen_socket } from '../gateway/transport/uws.js';

const arg = (name: string, fallback: number): number => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const REQUESTS = arg('requests', 200);
const REPEAT = arg('repeat', 2000);

const DOTNET_HEAD =
  'POST /service.asmx HTTP/1.1\r\n' +
  'User-Agent: Mozilla/4.0 (compatible; MSIE 6.0; MS Web Services Client Protocol 4.0.30319.42000)\r\n' +
  'Content-Type: text/xml; charset=utf-8\r\n' +
  'SOAPAction: "http://tempuri.org/LoginYInsertarEvento"\r\n' +
  'Host: gps.example.com:8080\r\n' +
  'Content-Length: 3\r\n' +
  'Expect: 100-continue\r\n' +
  'Connection: Keep-Alive\r\n' +
  'X-Request-Id: 5f0c6d2e\r\n\r\nabc';
const CONFLICTING_HEAD = DOTNET_HEAD.replace('Content-Length: 3\r\n', 'Content-Length: 3\r\nContent-Length: 4\r\n');

let scanNs = 0n;
let emptyNs = 0n;
let getNs = 0n;
const ignore = (): void => undefined;
let calls = 0;
let timing = false;
const verdicts: boolean[] = [];

const app = uWS.App().any('/*', (res, req) => {
  if (!timing) {
    verdicts.push(lengthIsAmbiguous(req));
  } else {
    let t = process.hrtime.bigint();
    for (let i = 0; i < REPEAT; i++) lengthIsAmbiguous(req);
    scanNs += process.hrtime.bigint() - t;
    t = process.hrtime.bigint();
    for (let i = 0; i < REPEAT; i++) req.forEach(ignore);
    emptyNs += process.hrtime.bigint() - t;
    t = process.hrtime.bigint();
    for (let i = 0; i < REPEAT; i++) req.getHeader('content-length');
    getNs += process.hrtime.bigint() - t;
    calls += REPEAT;
  }
  res.onAborted(() => undefined);
  res.onData((_, last) => {
    if (last) res.end('ok', true);
  });
});

async function send(port: number, head: string): Promise<void> {
  const s = net.connect(port, '127.0.0.1');
  s.resume(); // read the answer, so the server's close arrives
  await new Promise<void>((resolve, reject) => {
    s.once('close', () => resolve());
    s.once('error', reject);
    s.write(head);
  });
}

const token = await new Promise<us_listen_socket>((resolve, reject) =>
  app.listen('127.0.0.1', 0, (t: us_listen_socket | false) => (t === false ? reject(new Error('cannot listen')) : resolve(t))),
);
const port = uWS.us_socket_local_port(token);
await send(port, DOTNET_HEAD);
await send(port, CONFLICTING_HEAD);
if (verdicts[0] !== false || verdicts[1] !== true) throw new Error(`unexpected verdicts ${verdicts.join(', ')}`);
timing = true;
for (let i = 0; i < REQUESTS; i++) await send(port, DOTNET_HEAD);
uWS.us_listen_socket_close(token);

const scan = Number(scanNs) / calls;
const empty = Number(emptyNs) / calls;
const get = Number(getNs) / calls;
console.log(`${calls} calls on a 9-line .NET head, Node.js ${process.version}`);
console.log(`lengthIsAmbiguous (forEach over every line): ${scan.toFixed(0)} ns`);
console.log(`forEach with an empty callback (the floor):  ${empty.toFixed(0)} ns`);
console.log(`getHeader('content-length'):                 ${get.toFixed(0)} ns`);
console.log(`the check's share of a ~150 µs SOAP insert:  ${((scan / 150_000) * 100).toFixed(2)} %`);
