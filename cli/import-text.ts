import fs from 'node:fs';
import { invalidUtf8At } from '../gateway/admin/http.js';

/**
 * A migration file read line by line in constant memory, in the encoding the operator declared or
 * the one found: a BOM decides (UTF-8, UTF-16LE/BE); else UTF-8 when the first 64 KiB are valid UTF-8,
 * and Windows-1252 (what legacy Windows exports write) when they are not. A line holding a byte that
 * its encoding cannot have is handed on as invalid, with the byte's line and column, and never
 * decoded with a replacement character: a password read as "contrase\uFFFDa1" would lock its
 * provider out for good.
 */
export type ImportEncoding = 'utf-8' | 'windows-1252' | 'latin1' | 'utf-16le' | 'utf-16be';
export const DECLARABLE_ENCODINGS = ['utf-8', 'windows-1252', 'latin1'] as const;

/**
 * One line. `invalid` says why its bytes cannot be read in the encoding; `text` is then a Latin-1
 * reading, good only for finding its commas and quotes (ASCII in every encoding here), never sent.
 */
export interface TextLine {
  line: number;
  text: string;
  invalid?: string;
}

/** Bytes read to decide the encoding when none is declared. */
const SNIFF_BYTES = 64 * 1024;
/** Bytes Windows-1252 leaves undefined. */
const CP1252_UNDEFINED = new Set([0x81, 0x8d, 0x8f, 0x90, 0x9d]);
/** Windows-1252 as the WHATWG Encoding Standard reads it (Node.js 24's ICU; Node 20's read it as Latin-1). */
const WINDOWS_1252 = new TextDecoder('windows-1252');

/** Which encoding a file's first bytes call for, and how many BOM bytes to skip. */
export function sniffEncoding(head: Uint8Array): { encoding: ImportEncoding; bom: number } {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return { encoding: 'utf-8', bom: 3 };
  if (head[0] === 0xff && head[1] === 0xfe) return { encoding: 'utf-16le', bom: 2 };
  if (head[0] === 0xfe && head[1] === 0xff) return { encoding: 'utf-16be', bom: 2 };
  // A multi-byte sequence cut by the end of the sample is not a fault: look only up to the last line end.
  const end = head.lastIndexOf(0x0a);
  const sample = end < 0 || head.length < SNIFF_BYTES ? head : head.subarray(0, end);
  return { encoding: invalidUtf8At(sample) === null ? 'utf-8' : 'windows-1252', bom: 0 };
}

/** The line's text, or why it cannot be read in the encoding (with its 1-based column). */
function decodeLine(bytes: Uint8Array, line: number, encoding: ImportEncoding): TextLine {
  if (encoding === 'utf-8') {
    const fault = invalidUtf8At(bytes);
    if (fault === null) return { line, text: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8') };
    return {
      line,
      text: latin1(bytes),
      invalid: `byte 0x${fault.byte.toString(16).padStart(2, '0')} at line ${line}, column ${fault.column} is not valid UTF-8; if the file is a legacy Windows export, run again with --encoding windows-1252 (or latin1).`,
    };
  }
  if (encoding === 'windows-1252') {
    const at = bytes.findIndex((b) => CP1252_UNDEFINED.has(b));
    if (at >= 0) {
      return { line, text: latin1(bytes), invalid: `byte 0x${(bytes[at] ?? 0).toString(16)} at line ${line}, column ${at + 1} has no character in Windows-1252; check --encoding.` };
    }
    return { line, text: WINDOWS_1252.decode(bytes) };
  }
  return { line, text: latin1(bytes) };
}

const latin1 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1');

async function* chunksOf(file: string): AsyncGenerator<Buffer> {
  for await (const chunk of fs.createReadStream(file, { highWaterMark: SNIFF_BYTES })) yield chunk as Buffer;
}

/**
 * The file's lines (without their line ends), numbered from 1, with the encoding used. `declared`
 * wins over what the bytes suggest; a BOM of the declared encoding is skipped.
 */
export async function openTextLines(file: string, declared?: ImportEncoding): Promise<{ encoding: ImportEncoding; lines: AsyncGenerator<TextLine> }> {
  const chunks = chunksOf(file);
  const first = await chunks.next();
  const head: Buffer = first.done === true ? Buffer.alloc(0) : first.value;
  const sniffed = sniffEncoding(head);
  const encoding = declared ?? sniffed.encoding;
  const skip = declared === undefined || declared === sniffed.encoding ? sniffed.bom : 0;
  const lines = encoding === 'utf-16le' || encoding === 'utf-16be' ? utf16Lines(head.subarray(skip), chunks, encoding) : byteLines(head.subarray(skip), chunks, encoding);
  return { encoding, lines };
}

/** Single-byte and UTF-8 text: a line ends at byte 0x0A (which no other character contains), a CR before it is dropped. */
async function* byteLines(head: Buffer, rest: AsyncGenerator<Buffer>, encoding: ImportEncoding): AsyncGenerator<TextLine> {
  let carry: Buffer = Buffer.alloc(0);
  let line = 0;
  const emit = function* (data: Buffer): Generator<TextLine> {
    let start = 0;
    for (let nl = data.indexOf(0x0a, start); nl >= 0; nl = data.indexOf(0x0a, start)) {
      const end = nl > start && data[nl - 1] === 0x0d ? nl - 1 : nl;
      yield decodeLine(data.subarray(start, end), ++line, encoding);
      start = nl + 1;
    }
    carry = Buffer.from(data.subarray(start));
  };
  yield* emit(head);
  for await (const chunk of rest) yield* emit(carry.length === 0 ? chunk : Buffer.concat([carry, chunk]));
  if (carry.length > 0) yield decodeLine(carry.at(-1) === 0x0d ? carry.subarray(0, -1) : carry, ++line, encoding);
}

/** UTF-16 (only ever chosen by its BOM): decoded strictly as a stream, then split on line ends. */
async function* utf16Lines(head: Buffer, rest: AsyncGenerator<Buffer>, encoding: 'utf-16le' | 'utf-16be'): AsyncGenerator<TextLine> {
  const decoder = new TextDecoder(encoding, { fatal: true, ignoreBOM: true });
  let carry = '';
  let line = 0;
  const emit = function* (text: string): Generator<TextLine> {
    const parts = (carry + text).split('\n');
    carry = parts.pop() ?? '';
    for (const part of parts) yield { line: ++line, text: part.endsWith('\r') ? part.slice(0, -1) : part };
  };
  try {
    yield* emit(decoder.decode(head, { stream: true }));
    for await (const chunk of rest) yield* emit(decoder.decode(chunk, { stream: true }));
    yield* emit(decoder.decode());
  } catch {
    yield { line: line + 1, text: '', invalid: `line ${line + 1} is not valid ${encoding.toUpperCase()}; the rest of the file cannot be read.` };
    return;
  }
  if (carry !== '') yield { line: ++line, text: carry.endsWith('\r') ? carry.slice(0, -1) : carry };
}
