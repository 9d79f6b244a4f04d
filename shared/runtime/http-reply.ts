import type { ServerResponse } from 'node:http';

/**
 * Writing whole answers on node:http, as the admin API and the worker's probes answer: JSON with a
 * trailing newline, text, or nothing; never cached.
 */
const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A complete answer: a JSON body, a text body, or none (204). */
export type PlainReply = { status: number; json: JsonValue } | { status: number; text: string; contentType?: string } | { status: 204 };

export function sendJson(res: ServerResponse, status: number, body: JsonValue, headers: Record<string, string> = {}): void {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, {
    ...headers,
    'Content-Type': JSON_TYPE,
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
  });
  res.end(text);
}

function sendText(res: ServerResponse, status: number, text: string, contentType = TEXT_TYPE): void {
  res.writeHead(status, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
  });
  res.end(text);
}

function sendEmpty(res: ServerResponse, status: number): void {
  res.writeHead(status, { 'Cache-Control': 'no-store' });
  res.end();
}

export function sendReply(res: ServerResponse, reply: PlainReply): void {
  if ('json' in reply) sendJson(res, reply.status, reply.json);
  else if ('text' in reply) sendText(res, reply.status, reply.text, reply.contentType);
  else sendEmpty(res, reply.status);
}
