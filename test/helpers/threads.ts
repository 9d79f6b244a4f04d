import http from 'node:http';
import { soap11Envelope, NS, type Reply, type TestApp } from './harness.js';

/**
 * A SOAP 1.1 call on a connection of its own (`Connection: close`): the kernel hands each new
 * connection to one of the threads listening on the port, so many such calls land on every thread.
 */
export function freshSoap11(t: TestApp, op: string, params: string, cookie?: string): Promise<Reply> {
  const body = soap11Envelope(op, params);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${t.base}${t.config.servicePath}`,
      {
        method: 'POST',
        agent: false,
        headers: {
          'Content-Type': 'text/xml; charset=utf-8',
          SOAPAction: `"${NS}${op}"`,
          Connection: 'close',
          'Content-Length': Buffer.byteLength(body),
          ...(cookie === undefined ? {} : { Cookie: cookie }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const setCookie = res.headers['set-cookie'];
          resolve({
            status: res.statusCode ?? 0,
            contentType: res.headers['content-type'] ?? null,
            setCookie: setCookie === undefined ? null : setCookie.join(', '),
            text: Buffer.concat(chunks).toString('utf8'),
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The sum of a Prometheus counter's samples whose labels include `labels` (e.g. `operation="Login"`). */
export function counterSum(text: string, name: string, labels = ''): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (labels !== '' && !line.includes(labels)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** Requests of an operation answered by the main thread and by every thread together. */
export async function servedBy(t: TestApp, operation: string): Promise<{ main: number; all: number }> {
  const label = `operation="${operation}"`;
  return {
    main: counterSum(await t.app.metrics.text(), 'gateway_requests_total', label),
    all: counterSum(await t.app.metricsText(), 'gateway_requests_total', label),
  };
}

/** The id in `<…Result>id</…Result>`, or NaN. */
export function resultOf(reply: Reply): number {
  const m = /Result>(-?\d+)</.exec(reply.text);
  return m === null ? NaN : Number(m[1]);
}
