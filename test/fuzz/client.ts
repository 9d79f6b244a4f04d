/**
 * A raw HTTP/1.1 client: it sends the exact bytes a case produced (no header validation, no
 * normalisation, which fetch and undici would impose) and parses the answer with http-parser-js.
 * Keep-alive connections carry ordinary cases; cases with unusual framing get a fresh one.
 */
import net from 'node:net';
import { HTTPParser } from 'http-parser-js';

export type Outcome = 'answered' | 'closed' | 'reset' | 'timeout' | 'bad-response';

export interface Answer {
  outcome: Outcome;
  status: number;
  /** Lower-cased names. */
  headers: [string, string][];
  body: Buffer;
  ms: number;
  /** Bytes that arrived after the first answer on a dedicated connection (a HEAD body, say). */
  extraBytes: number;
  /** Bytes received for this request (0 with a close: the server never started an answer). */
  received: number;
}

export function header(a: Answer, name: string): string | null {
  return a.headers.find(([k]) => k === name)?.[1] ?? null;
}

interface Pending {
  resolve: (a: Answer) => void;
  started: number;
  status: number;
  headers: [string, string][];
  chunks: Buffer[];
  timer: NodeJS.Timeout;
  received: number;
}

export class Connection {
  private socket: net.Socket | null = null;
  private parser: InstanceType<typeof HTTPParser> | null = null;
  private pending: Pending | null = null;
  private head = false;
  /** Answers this socket already carried: a close before any byte on a reused socket is a race, not a finding. */
  answeredOnSocket = 0;
  /** Answers or bytes that arrived while no request was waiting: the server answered something twice. */
  stray = 0;

  constructor(
    private readonly port: number,
    private readonly host = '127.0.0.1',
  ) {}

  private open(): net.Socket {
    const socket = net.connect(this.port, this.host);
    socket.setNoDelay(true);
    const parser = new HTTPParser(HTTPParser.RESPONSE);
    parser[HTTPParser.kOnHeadersComplete] = (info) => {
      const p = this.pending;
      if (p === null) {
        this.stray++;
        return 0;
      }
      p.status = info.statusCode;
      p.headers = [];
      for (let i = 0; i + 1 < info.headers.length; i += 2) p.headers.push([info.headers[i]!.toLowerCase(), info.headers[i + 1]!]);
      return this.head ? 1 : 0;
    };
    parser[HTTPParser.kOnBody] = (chunk, offset, length) => {
      this.pending?.chunks.push(Buffer.from(chunk.subarray(offset, offset + length)));
    };
    parser[HTTPParser.kOnMessageComplete] = () => {
      const p = this.pending;
      // An interim answer (100 Continue): the final one follows.
      if (p !== null && p.status >= 100 && p.status < 200) {
        p.status = 0;
        p.chunks = [];
        return;
      }
      this.settle('answered');
    };
    socket.on('data', (data) => {
      if (this.keepRaw) this.raw.push(Buffer.from(data));
      if (this.pending === null) {
        this.stray++;
        return;
      }
      this.pending.received += data.length;
      const r = parser.execute(data);
      if (r instanceof Error) this.settle('bad-response');
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      this.settle(err.code === 'ECONNRESET' || err.code === 'EPIPE' ? 'reset' : 'closed');
      this.drop();
    });
    socket.on('close', () => {
      if (this.pending !== null && this.pending.status !== 0) parser.finish();
      this.settle('closed');
      this.drop();
    });
    this.socket = socket;
    this.parser = parser;
    this.answeredOnSocket = 0;
    return socket;
  }

  /** Every byte received, kept only for the HEAD check of dedicated connections. */
  private keepRaw = false;
  private raw: Buffer[] = [];

  private drop(): void {
    this.socket?.destroy();
    this.socket = null;
    this.parser = null;
  }

  private settle(outcome: Outcome): void {
    const p = this.pending;
    if (p === null) return;
    this.pending = null;
    clearTimeout(p.timer);
    if (outcome === 'answered') this.answeredOnSocket++;
    p.resolve({
      outcome,
      status: outcome === 'answered' ? p.status : 0,
      headers: p.headers,
      body: Buffer.concat(p.chunks),
      ms: performance.now() - p.started,
      extraBytes: 0,
      received: p.received,
    });
  }

  /** Sends one request on this connection (opening it if needed) and waits for its answer. */
  send(bytes: Buffer, options: { head: boolean; timeoutMs: number }): Promise<Answer> {
    if (this.pending !== null) throw new Error('one request at a time per connection');
    const socket = this.socket ?? this.open();
    this.head = options.head;
    return new Promise<Answer>((resolve) => {
      this.pending = {
        resolve,
        started: performance.now(),
        status: 0,
        headers: [],
        chunks: [],
        received: 0,
        timer: setTimeout(() => {
          this.settle('timeout');
          this.drop();
        }, options.timeoutMs),
      };
      socket.write(bytes);
    });
  }

  close(): void {
    this.drop();
  }

  /**
   * One request on a fresh connection; after the first answer, waits `graceMs` and counts any
   * further bytes (nothing may follow the answer to a HEAD request).
   */
  static async once(port: number, bytes: Buffer, options: { head: boolean; timeoutMs: number; graceMs: number }): Promise<Answer> {
    const c = new Connection(port);
    c.keepRaw = options.head;
    try {
      const answer = await c.send(bytes, options);
      if (answer.outcome === 'answered' && options.head && options.graceMs > 0) {
        await new Promise((r) => setTimeout(r, options.graceMs));
        answer.extraBytes = bytesAfterFinalHead(Buffer.concat(c.raw));
      }
      return answer;
    } finally {
      c.close();
    }
  }
}

/** Bytes after the head of the final answer, interim ones (100 Continue) skipped. */
function bytesAfterFinalHead(raw: Buffer): number {
  let start = 0;
  for (;;) {
    const end = raw.indexOf('\r\n\r\n', start);
    if (end < 0) return 0;
    if (!/^HTTP\/1\.[01] 1\d\d /.test(raw.toString('latin1', start, start + 13))) return raw.length - end - 4;
    start = end + 4;
  }
}
