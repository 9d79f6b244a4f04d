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
      `${t.base}${t.config.service.path}`,
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

/**
 * Sends `count` inserts at once and closes the gateway as soon as ten are answered: the ids of
 * those acknowledged (positive), whether before or during the stop. Failed calls count as not
 * acknowledged.
 */
export async function insertsAcrossClose(t: TestApp, count: number, insert: (i: number) => Promise<Reply>): Promise<number[]> {
  let answered = 0;
  let firstAnswers: () => void = () => {};
  const someAnswered = new Promise<void>((resolve) => (firstAnswers = resolve));
  const calls = Array.from({ length: count }, (_, i) =>
    insert(i).then(
      (reply) => {
        if (++answered === 10) firstAnswers();
        return resultOf(reply);
      },
      () => null,
    ),
  );
  await someAnswered;
  const closed = t.app.close();
  const acked = (await Promise.all(calls)).filter((id): id is number => id !== null && id > 0);
  await closed;
  return acked;
}
