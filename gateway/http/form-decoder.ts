/**
 * Streaming `application/x-www-form-urlencoded` decoder (also used for query strings):
 * complete `name=value` pairs are decoded as chunks arrive, so a body is never held twice.
 * Percent-escapes and raw bytes are both read as UTF-8; `+` is a space. First value wins.
 */
export class FormDecoder {
  readonly fields = new Map<string, string>();
  private rest = '';

  /** `chunk` is decoded as latin1 so that each char is one byte of the original body. */
  push(chunk: Uint8Array): void {
    const text = this.rest + Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1');
    const lastAmp = text.lastIndexOf('&');
    if (lastAmp < 0) {
      this.rest = text;
      return;
    }
    this.addPairs(text.slice(0, lastAmp));
    this.rest = text.slice(lastAmp + 1);
  }

  end(): Map<string, string> {
    this.addPairs(this.rest);
    this.rest = '';
    return this.fields;
  }

  static decodeQuery(query: string): Map<string, string> {
    const d = new FormDecoder();
    d.addPairs(Buffer.from(query, 'utf8').toString('latin1'));
    return d.fields;
  }

  private addPairs(text: string): void {
    if (text === '') return;
    for (const pair of text.split('&')) {
      if (pair === '') continue;
      const eq = pair.indexOf('=');
      const name = decodeComponent(eq < 0 ? pair : pair.slice(0, eq));
      const value = eq < 0 ? '' : decodeComponent(pair.slice(eq + 1));
      if (!this.fields.has(name)) this.fields.set(name, value);
    }
  }
}

const HEX = /^[0-9A-Fa-f]{2}$/;

function decodeComponent(latin1: string): string {
  if (latin1.indexOf('%') < 0 && latin1.indexOf('+') < 0 && !/[\x80-\xff]/.test(latin1)) return latin1;
  const bytes = Buffer.allocUnsafe(latin1.length);
  let n = 0;
  for (let i = 0; i < latin1.length; i++) {
    const c = latin1.charCodeAt(i);
    if (c === 0x2b) bytes[n++] = 0x20;
    else if (c === 0x25 && HEX.test(latin1.slice(i + 1, i + 3))) {
      bytes[n++] = parseInt(latin1.slice(i + 1, i + 3), 16);
      i += 2;
    } else bytes[n++] = c;
  }
  return bytes.toString('utf8', 0, n);
}
