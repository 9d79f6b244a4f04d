import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson, type JsonValue } from '../../shared/runtime/http-reply.js';
import { errorMessage } from '../../shared/util/error-message.js';
import { AdminError } from './errors.js';

/**
 * Small request/response helpers of the admin API: JSON in, JSON out, errors (errors.ts) as
 * `{"error": "..."}` (plus `field` when one request field is at fault).
 */
export { sendReply, type JsonValue } from '../../shared/runtime/http-reply.js';

/** Largest request body the admin API reads. */
const BODY_LIMIT_BYTES = 64 * 1024;

export function sendError(res: ServerResponse, error: AdminError): void {
  const body: { [key: string]: JsonValue } = { ...error.extra, error: error.message };
  if (error.field !== undefined) body.field = error.field;
  const requestId = res.getHeader('X-Request-Id');
  if (typeof requestId === 'string') body.requestId = requestId;
  sendJson(res, error.status, body, error.headers);
}

/**
 * Reads the whole body, refusing more than `limit` bytes with 413 (from Content-Length up front,
 * or as soon as a chunked body crosses it). After a refusal the rest of the body is drained and
 * discarded so the client can read the answer; the connection is then closed.
 */
export function readBody(req: IncomingMessage, limit = BODY_LIMIT_BYTES): Promise<Buffer> {
  const tooLarge = (): AdminError => AdminError.of('bodyTooLarge', { limit });
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    req.resume();
    return Promise.reject(tooLarge());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > limit) {
        refused = true;
        chunks.length = 0;
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!refused) resolve(Buffer.concat(chunks, size));
    });
    req.on('error', (err) => {
      if (!refused) reject(err);
    });
  });
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * The body as UTF-8 text (a BOM dropped); a 400 naming the first invalid byte's line and column,
 * where a lenient decode would have stored U+FFFD in place of what the operator sent.
 */
function utf8Body(raw: Buffer): string {
  try {
    return STRICT_UTF8.decode(raw);
  } catch {
    const fault = invalidUtf8At(raw) ?? { byte: 0, line: 1, column: 1 };
    throw AdminError.of('bodyNotUtf8', { byte: fault.byte.toString(16).padStart(2, '0'), line: fault.line, column: fault.column });
  }
}

interface Utf8Fault {
  /** Byte offset of the sequence that is invalid. */
  offset: number;
  byte: number;
  /** 1-based line, and 1-based column in characters. */
  line: number;
  column: number;
}

/** Where the first invalid UTF-8 sequence starts (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF); null when all is valid. */
export function invalidUtf8At(bytes: Uint8Array): Utf8Fault | null {
  let line = 1;
  let column = 1;
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i] ?? 0;
    let length = 0;
    let min = 0;
    let max = 0xbf;
    if (b < 0x80) length = 1;
    else if (b >= 0xc2 && b <= 0xdf) length = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      length = 3;
      if (b === 0xe0) min = 0xa0;
      if (b === 0xed) max = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      length = 4;
      if (b === 0xf0) min = 0x90;
      if (b === 0xf4) max = 0x8f;
    }
    let valid = length > 0 && i + length <= bytes.length;
    for (let k = 1; valid && k < length; k++) {
      const c = bytes[i + k] ?? 0;
      valid = k === 1 ? c >= Math.max(min, 0x80) && c <= max : c >= 0x80 && c <= 0xbf;
    }
    if (!valid) return { offset: i, byte: b, line, column };
    if (b === 0x0a) {
      line++;
      column = 1;
    } else column++;
    i += length;
  }
  return null;
}

/** Parses a JSON object body; 400 with a clear message for anything else. */
export function parseJsonObject(raw: Buffer): Record<string, unknown> {
  const text = utf8Body(raw);
  if (text.trim() === '') throw AdminError.of('bodyEmpty');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw AdminError.of('bodyNotJson', { detail: errorMessage(err) });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw AdminError.of('bodyNotObject');
  }
  return value as Record<string, unknown>;
}
