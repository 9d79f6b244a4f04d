/**
 * Form fields as ASP.NET's NameValueCollection holds them (docs/protocol.md §Reading requests):
 * names compare case-insensitively, and a repeated name's values are joined with commas
 * (`a=1&A=2` reads as "1,2"). Iteration gives each name as first spelt.
 */
export class FormFields implements Iterable<[string, string]> {
  private readonly byKey = new Map<string, { name: string; value: string }>();

  add(name: string, value: string): void {
    const key = name.toLowerCase();
    const field = this.byKey.get(key);
    if (field === undefined) this.byKey.set(key, { name, value });
    else field.value += `,${value}`;
  }

  get(name: string): string | undefined {
    return this.byKey.get(name.toLowerCase())?.value;
  }

  /** The value under `key`, a name already lower-cased (a compiled plan lower-cases its names once). */
  getByKey(key: string): string | undefined {
    return this.byKey.get(key)?.value;
  }

  /** The fields whose lower-cased name is not in `declared`, by name as first spelt, in order; null when none. */
  undeclared(declared: ReadonlySet<string>): Map<string, string> | null {
    let out: Map<string, string> | null = null;
    for (const [key, { name, value }] of this.byKey) if (!declared.has(key)) (out ??= new Map<string, string>()).set(name, value);
    return out;
  }

  *[Symbol.iterator](): Iterator<[string, string]> {
    for (const { name, value } of this.byKey.values()) yield [name, value];
  }
}

/**
 * Streaming `application/x-www-form-urlencoded` decoder (also used for query strings):
 * complete `name=value` pairs are decoded as chunks arrive, so a body is never held twice.
 * Percent-escapes and raw bytes are both read as UTF-8; `+` is a space.
 */
export class FormDecoder {
  readonly fields = new FormFields();
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

  end(): FormFields {
    this.addPairs(this.rest);
    this.rest = '';
    return this.fields;
  }

  static decodeQuery(query: string): FormFields {
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
      this.fields.add(name, value);
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
