import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson, type JsonValue } from '../../shared/http-reply.js';

/**
 * Small request/response helpers of the admin API: JSON in, JSON out, errors as
 * `{"error": "..."}` (plus `field` when one request field is at fault).
 */
export { JSON_TYPE, TEXT_TYPE, sendEmpty, sendJson, sendReply, sendText, type JsonValue } from '../../shared/http-reply.js';

/** Largest request body the admin API reads. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** A failure the client caused (or a lookup miss), answered with its status and message. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** A 400 naming the request field at fault. */
export function invalid(field: string, message: string): HttpError {
  return new HttpError(400, message, field);
}

export function notFound(message: string): HttpError {
  return new HttpError(404, message);
}

export function sendError(res: ServerResponse, error: HttpError): void {
  const body: { [key: string]: JsonValue } = { error: error.message };
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
  const tooLarge = (): HttpError =>
    new HttpError(413, `Request body exceeds the limit of ${limit} bytes.`, undefined, { Connection: 'close' });
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

/** Parses a JSON object body; 400 with a clear message for anything else. */
export function parseJsonObject(raw: Buffer): Record<string, unknown> {
  const text = raw.toString('utf8').replace(/^\uFEFF/, '');
  if (text.trim() === '') throw new HttpError(400, 'Request body is empty; a JSON object is required.');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new HttpError(400, `Request body is not valid JSON: ${detail}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new HttpError(400, 'Request body must be a JSON object.');
  }
  return value as Record<string, unknown>;
}
