import net from 'node:net';

export interface RawResponse {
  readonly statusLine: string;
  /** Header values by lower-cased name. */
  readonly headers: ReadonlyMap<string, string>;
  readonly body: Buffer;
}

/**
 * One kept-alive HTTP/1.1 connection driven by hand, to see exactly what follows a response on the
 * wire. Responses are framed by Content-Length; a HEAD response is framed as headers only, so any
 * body the server sends after one shows up as garbage before the next status line.
 */
export class RawConnection {
  private buffer = Buffer.alloc(0);
  private wake: (() => void) | null = null;
  closed = false;

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, d]);
      this.wake?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  /** Sends raw request bytes (one request or several pipelined). */
  write(raw: string): void {
    this.socket.write(raw);
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
          return { statusLine: lines[0] ?? '', headers, body: Buffer.from(body) };
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
