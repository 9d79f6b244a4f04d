import net from 'node:net';

export interface RawResponse {
  readonly statusLine: string;
  readonly status: number;
  /** Header values by lower-cased name. */
  readonly headers: ReadonlyMap<string, string>;
  readonly body: Buffer;
}

/**
 * One kept-alive HTTP/1.1 connection driven by hand, to see exactly what follows a response on the
 * wire, and for what fetch cannot do: pipelining, slow bodies, duplicate or malformed headers, idle
 * waits on one socket. Responses are framed by Content-Length; a HEAD response is framed as headers
 * only, so any body the server sends after one shows up as garbage before the next status line.
 */
export class RawConnection {
  private buffer = Buffer.alloc(0);
  private wake: (() => void) | null = null;
  closed = false;
  private readonly whenClosed: Promise<void>;

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, d]);
      this.wake?.();
    });
    this.whenClosed = new Promise((resolve) =>
      socket.on('close', () => {
        this.closed = true;
        this.wake?.();
        resolve();
      }),
    );
    // A write after the server hung up fails; `closed` says so, the error itself adds nothing.
    socket.on('error', () => undefined);
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  /** Sends raw request bytes (one request or several pipelined). */
  write(raw: string | Buffer): void {
    this.socket.write(raw);
  }

  /** Sends `data` in `chunkBytes` pieces, one every `intervalMs`; throws once the server hangs up. */
  async writeSlowly(data: Buffer, chunkBytes: number, intervalMs: number): Promise<void> {
    for (let off = 0; off < data.length; off += chunkBytes) {
      if (off > 0) await new Promise((r) => setTimeout(r, intervalMs));
      if (this.closed) throw new Error(`the server closed the connection after ${off} of ${data.length} body bytes`);
      this.socket.write(data.subarray(off, off + chunkBytes));
    }
  }

  /** True if the server closes the connection within `timeoutMs`. */
  async closesWithin(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const closed = await Promise.race([this.whenClosed.then(() => true as const), timedOut]);
    clearTimeout(timer);
    return closed;
  }

  /** Reads the next response; `head` says it answers a HEAD (no body whatever Content-Length says). */
  async read(head = false, timeoutMs = 2000): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end >= 0) {
        const lines = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
        const headers = new Map<string, string>();
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(':');
          headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
        }
        const length = head ? 0 : Number(headers.get('content-length') ?? '0');
        if (this.buffer.length >= end + 4 + length) {
          const body = this.buffer.subarray(end + 4, end + 4 + length);
          this.buffer = this.buffer.subarray(end + 4 + length);
          const statusLine = lines[0] ?? '';
          return { statusLine, status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? NaN), headers, body: Buffer.from(body) };
        }
      }
      if (this.closed) throw new Error(`connection closed; unread: ${JSON.stringify(this.buffer.toString('latin1'))}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no complete response; unread: ${JSON.stringify(this.buffer.toString('latin1'))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  /** Bytes received and not yet read as a response. */
  unread(): string {
    return this.buffer.toString('latin1');
  }

  close(): void {
    this.socket.destroy();
  }
}
