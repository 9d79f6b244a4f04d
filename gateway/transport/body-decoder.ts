import { TextDecoder } from 'node:util';

/**
 * Turns request body chunks into text as they arrive, in the charset the request declares:
 * the Content-Type charset, else the XML declaration's encoding, else UTF-8 (BOM stripped).
 * ISO-8859-1 occurs in the field; other charsets are decoded by TextDecoder when Node knows them.
 */
const DECL_SNIFF_LIMIT = 256;

export class UnsupportedCharsetError extends Error {}

/** Bytes that are not valid in the declared encoding (ASMX: "Invalid character in the given encoding"). */
export class InvalidEncodingError extends Error {}

type Decode = (chunk: Uint8Array, last: boolean) => string;

function decoderFor(charset: string): Decode {
  const cs = charset.trim().toLowerCase().replace(/^"|"$/g, '');
  if (cs === 'iso-8859-1' || cs === 'latin1' || cs === 'l1' || cs === 'us-ascii' || cs === 'ascii') {
    // Single-byte: stateless per chunk; Buffer's latin1 is true ISO-8859-1 (TextDecoder maps it to cp1252).
    return (chunk) => Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1');
  }
  let td: TextDecoder;
  try {
    // fatal: invalid bytes are refused, never turned into U+FFFD and stored as if sent.
    td = new TextDecoder(cs === '' ? 'utf-8' : cs, { fatal: true });
  } catch {
    throw new UnsupportedCharsetError(`Unsupported charset: ${charset}.`);
  }
  let consumed = 0;
  return (chunk, last) => {
    try {
      const text = td.decode(chunk, { stream: !last });
      consumed += chunk.byteLength;
      return text;
    } catch {
      throw new InvalidEncodingError(
        `Invalid character in the given encoding (${td.encoding}), within bytes ${consumed + 1}-${consumed + chunk.byteLength} of the body.`,
      );
    }
  };
}

export class BodyDecoder {
  private decode: Decode | null = null;
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;

  constructor(private readonly declaredCharset: string | null) {
    if (declaredCharset !== null && declaredCharset !== '') this.decode = decoderFor(declaredCharset);
  }

  /** Returns the text decodable so far (possibly empty while sniffing the XML declaration). */
  push(chunk: Uint8Array, last: boolean): string {
    if (this.decode !== null) return this.decode(chunk, last);
    // Copy: the caller's buffer is reused/detached after the callback returns.
    this.pending.push(Uint8Array.from(chunk));
    this.pendingBytes += chunk.byteLength;
    const head = Buffer.concat(this.pending, this.pendingBytes);
    const sniffed = sniffXmlEncoding(head, last || this.pendingBytes >= DECL_SNIFF_LIMIT);
    if (sniffed === undefined) return '';
    this.decode = decoderFor(sniffed ?? 'utf-8');
    this.pending = [];
    this.pendingBytes = 0;
    return this.decode(head, last);
  }
}

/**
 * The encoding named in `<?xml ... encoding="X"?>`: a string when found, null when there is no
 * declaration (or no encoding in it), undefined when more bytes are needed to tell.
 */
function sniffXmlEncoding(head: Buffer, final: boolean): string | null | undefined {
  let start = 0;
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return 'utf-8';
  while (start < head.length && (head[start] === 0x20 || head[start] === 0x0a || head[start] === 0x0d || head[start] === 0x09)) start++;
  const text = head.toString('latin1', start, Math.min(head.length, start + DECL_SNIFF_LIMIT));
  if (text.length < 5) return final ? null : undefined;
  if (!text.startsWith('<?xml')) return null;
  const close = text.indexOf('?>');
  if (close < 0) return final ? null : undefined;
  const m = /encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(text.slice(0, close));
  return m?.[1] ?? null;
}
