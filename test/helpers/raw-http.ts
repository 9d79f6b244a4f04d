import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: ReadonlyMap<string, string>;
  body: string;
}

/**
 * One client TCP connection written byte by byte, for what fetch cannot do: pipelining, slow
 * bodies, duplicate or malformed headers, idle waits on the same socket. Reads responses framed
 * by Content-Length (both uWS and nginx send one) and skips interim 1xx answers.
 */
export class RawConnection {
  private buffer = Buffer.alloc(0);
  private waiter: (() => void) | null = null;
  /** Set once the peer closed (or reset) the connection. */
  closed = false;
  readonly whenClosed: Promise<void>;

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, d]);
      this.waiter?.();
    });
    this.whenClosed = new Promise((resolve) =>
      socket.once('close', () => {
        this.closed = true;
        this.waiter?.();
        resolve();
      }),
    );
    socket.on('error', () => undefined);
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.setNoDelay(true);
      socket.once('connect', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  write(data: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(data, (err) => (err ? reject(err) : resolve())));
  }

  /** Writes `data` in `chunkBytes` pieces, one every `intervalMs`. */
  async writeSlowly(data: Buffer, chunkBytes: number, intervalMs: number): Promise<void> {
    for (let off = 0; off < data.length; off += chunkBytes) {
      if (off > 0) await new Promise((r) => setTimeout(r, intervalMs));
      if (this.closed) throw new Error(`the server closed the connection after ${off} of ${data.length} body bytes`);
      await this.write(data.subarray(off, off + chunkBytes));
    }
  }

  /** Bytes received and not yet consumed as a response. */
  pending(): string {
    return this.buffer.toString('latin1');
  }

  /** The next final response; rejects when the connection closes first or after `timeoutMs`. */
  async response(timeoutMs = 10_000): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = this.take();
      if (parsed !== null) {
        if (parsed.status >= 200) return parsed;
        continue;
      }
      if (this.closed) throw new Error(`connection closed before a complete response (received: ${JSON.stringify(this.pending())})`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no complete response within ${timeoutMs} ms (received: ${JSON.stringify(this.pending())})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.waiter = null;
    }
  }

  /** Resolves true if the peer closes the connection within `timeoutMs`. */
  async closesWithin(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const result = await Promise.race([this.whenClosed.then(() => true as const), timedOut]);
    clearTimeout(timer);
    return result;
  }

  close(): void {
    this.socket.destroy();
  }

  private take(): RawResponse | null {
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end < 0) return null;
    const lines = this.buffer.toString('latin1', 0, end).split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1]);
    if (!Number.isInteger(status)) throw new Error(`not an HTTP response: ${JSON.stringify(lines[0])}`);
    const headers = new Map<string, string>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const length = status < 200 ? 0 : Number(headers.get('content-length'));
    if (!Number.isInteger(length)) throw new Error(`response without Content-Length: ${lines.join(' | ')}`);
    if (this.buffer.length < end + 4 + length) return null;
    const body = this.buffer.toString('utf8', end + 4, end + 4 + length);
    this.buffer = this.buffer.subarray(end + 4 + length);
    return { status, headers, body };
  }
}
