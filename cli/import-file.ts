import { Readable, pipeline } from 'node:stream';
import { parse, type CsvError, type Info, type Parser } from 'csv-parse';
import type { TextLine } from './import-text.js';
import { errorMessage } from '../shared/util/error-message.js';

/**
 * Reading a migration file (docs/migration.md): CSV with a header row, or JSON lines. Each record
 * becomes the typed object the import API takes, with its line number; a record that cannot be
 * converted fails here, alone, with its reason.
 */
export type ImportKind = 'providers' | 'trips';

export const COLUMNS: Record<ImportKind, readonly string[]> = {
  providers: ['systemUser', 'password', 'timeZone', 'enabled', 'requireRegisteredVehicles'],
  trips: ['systemUser', 'dominio', 'nroSerie'],
};
const REQUIRED: Record<ImportKind, readonly string[]> = {
  providers: ['systemUser', 'password'],
  trips: ['systemUser', 'dominio', 'nroSerie'],
};
const BOOLEAN_COLUMNS = new Set(['enabled', 'requireRegisteredVehicles']);

export interface ImportLine {
  line: number;
  [field: string]: unknown;
}

/** The file as a whole cannot be read (no header, unknown column...): nothing is imported. */
export class ImportFileError extends Error {}

const TRUE = new Set(['true', '1', 'yes', 'y', 'si', 'sí', 't']);
const FALSE = new Set(['false', '0', 'no', 'n', 'f']);

/** Booleans as legacy exports write them (true/false, 1/0, yes/no, sí/no); empty = not given. */
function booleanOf(value: unknown, column: string): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === null || value === undefined) return undefined;
  const text = textOf(value).trim().toLowerCase();
  if (text === '') return undefined;
  if (TRUE.has(text)) return true;
  if (FALSE.has(text)) return false;
  throw new Error(`${column} must be true or false (or 1/0, yes/no), got "${textOf(value)}".`);
}

/** A cell as text: CSV cells are strings already; JSON values other than scalars show as JSON. */
function textOf(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint' ? String(value) : JSON.stringify(value);
}

/** One record as the API wants it: known columns only, empty optional values left out, booleans converted. */
function toLine(kind: ImportKind, line: number, record: Record<string, unknown>): ImportLine {
  const out: ImportLine = { line };
  for (const [column, value] of Object.entries(record)) {
    if (!COLUMNS[kind].includes(column)) throw new Error(`Unknown field "${column}"; a ${kind} line has ${COLUMNS[kind].join(', ')}.`);
    if (BOOLEAN_COLUMNS.has(column)) {
      const b = booleanOf(value, column);
      if (b !== undefined) out[column] = b;
    } else if (column === 'timeZone') {
      if (value !== '' && value !== undefined) out[column] = value;
    } else {
      out[column] = value;
    }
  }
  for (const column of REQUIRED[kind]) {
    const value = out[column];
    if (value === undefined || value === null || value === '') throw new Error(`${column} is missing.`);
  }
  return out;
}

/** CSV or JSON lines: by the name's extension, else by the first character that is not blank. */
export function detectFormat(fileName: string, firstLine: string): 'csv' | 'jsonl' {
  if (/\.(jsonl|ndjson|json)$/i.test(fileName)) return 'jsonl';
  if (/\.(csv|txt)$/i.test(fileName)) return 'csv';
  return firstLine.replace(/^\uFEFF/, '').trimStart().startsWith('{') ? 'jsonl' : 'csv';
}

/** One record of the file: the line for the API, or why it cannot be imported. */
export type ImportRecord = { line: ImportLine } | { failure: { line: number; reason: string } };

/**
 * The records of a file, one at a time, as its lines arrive (constant memory whatever the size). A
 * header that cannot be used throws ImportFileError before any record is yielded.
 */
export async function* importRecords(kind: ImportKind, lines: AsyncIterable<TextLine>, format: 'csv' | 'jsonl'): AsyncGenerator<ImportRecord> {
  if (format === 'jsonl') {
    for await (const l of lines) {
      if (l.invalid !== undefined) {
        yield { failure: { line: l.line, reason: l.invalid } };
        continue;
      }
      if (l.text.trim() === '') continue;
      try {
        const value: unknown = JSON.parse(l.text);
        if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('a line must be one JSON object.');
        yield { line: toLine(kind, l.line, value as Record<string, unknown>) };
      } catch (err) {
        yield { failure: { line: l.line, reason: err instanceof SyntaxError ? `not JSON: ${err.message}` : errorMessage(err) } };
      }
    }
    return;
  }
  let columns: string[] | null = null;
  for await (const record of csvRecords(lines)) {
    if (columns === null) {
      if ('reason' in record) throw new ImportFileError(`The header (line ${record.line}): ${record.reason}`);
      columns = headerColumns(kind, record.fields);
      continue;
    }
    yield recordOf(kind, columns, record);
  }
  if (columns === null) throw new ImportFileError('The file is empty; it needs a header row.');
}

function headerColumns(kind: ImportKind, names: string[]): string[] {
  const columns = names.map((name) => {
    const wanted = COLUMNS[kind].find((c) => c.toLowerCase() === name.trim().toLowerCase());
    if (wanted === undefined) throw new ImportFileError(`Unknown column "${name}" in the header; a ${kind} file has ${COLUMNS[kind].join(', ')}.`);
    return wanted;
  });
  const missing = REQUIRED[kind].filter((c) => !columns.includes(c));
  if (missing.length > 0) throw new ImportFileError(`The header lacks ${missing.join(', ')} (it has ${columns.join(', ')}).`);
  return columns;
}

function recordOf(kind: ImportKind, columns: string[], record: CsvRecord): ImportRecord {
  const line = record.line;
  if ('reason' in record) return { failure: { line, reason: record.reason } };
  try {
    if (record.fields.length !== columns.length) throw new Error(`expected ${columns.length} fields (${columns.join(', ')}), got ${record.fields.length}.`);
    return { line: toLine(kind, line, Object.fromEntries(columns.map((c, i) => [c, record.fields[i] ?? '']))) };
  } catch (err) {
    return { failure: { line, reason: errorMessage(err) } };
  }
}

/** A CSV record and the line it starts on, or why it cannot be read. */
type CsvRecord = { line: number; fields: string[] } | { line: number; reason: string };

/** A record longer than this is a quote never closed, not data: the import stops rather than hold the file. */
const MAX_RECORD_BYTES = 64 * 1024;
/** Lines are handed to csv-parse in pieces of about this many characters (one per line costs a stream write each). */
const PIECE_CHARS = 64 * 1024;

/** What the parser gives: a record (`info: true, raw: true`), or one it skipped, pushed by `on_skip` in its place. */
type ParserOutput = { record: string[]; info: Info; raw: string } | { skipped: CsvError; raw: string };

/**
 * The decoded lines as one text for csv-parse, each ended by "\n", so that its line numbers are the
 * file's. A line that failed decoding goes in too (its Latin-1 reading keeps the commas and quotes
 * where they are, so the records after it are cut where they should be), and is noted in `invalid`:
 * the record holding it fails with that reason, and its text is never sent.
 */
async function* csvText(lines: AsyncIterable<TextLine>, invalid: Map<number, string>): AsyncGenerator<string> {
  let piece = '';
  for await (const l of lines) {
    if (l.invalid !== undefined) invalid.set(l.line, l.invalid);
    piece += `${l.text}\n`;
    if (piece.length >= PIECE_CHARS) {
      yield piece;
      piece = '';
    }
  }
  if (piece !== '') yield piece;
}

/**
 * The line a record starts on. csv-parse tells the line it ends on, and its raw text, which begins
 * with the blank lines skipped before it and ends with its "\n".
 */
function startLine(endLine: number, raw: string): number {
  const text = raw.replace(/^\n+/, '');
  let breaks = 0;
  for (let at = text.indexOf('\n'); at >= 0 && at < text.length - 1; at = text.indexOf('\n', at + 1)) breaks++;
  return endLine - breaks;
}

/** The first decoding fault in lines first..last; faults up to `last` are then forgotten. */
function takeInvalid(invalid: Map<number, string>, first: number, last: number): string | undefined {
  let reason: string | undefined;
  for (const [line, why] of invalid) {
    if (line > last) break;
    if (line >= first) reason ??= why;
    invalid.delete(line);
  }
  return reason;
}

/** Decoding faults on lines before `line` that no record held (a UTF-16 file cut short ends on a blank line): each fails alone. */
function* strayInvalid(invalid: Map<number, string>, line: number): Generator<CsvRecord> {
  for (const [at, reason] of invalid) {
    if (at >= line) return;
    invalid.delete(at);
    yield { line: at, reason };
  }
}

/** Why csv-parse skipped a record, in an operator's words; a fault after which the file cannot be followed stops the import. */
function skipReason(err: CsvError, start: number): string {
  const field = typeof err.column === 'number' ? err.column + 1 : 1;
  const at = typeof err.lines === 'number' ? err.lines : start;
  switch (err.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return 'a quoted value starting on this line is never closed (the rest of the file is part of it).';
    case 'INVALID_OPENING_QUOTE':
      return `line ${at}, field ${field}: a quote inside a value that does not start with one; quote the whole value and double the quotes inside it.`;
    case 'CSV_INVALID_CLOSING_QUOTE':
      // csv-parse stays inside the value, so where the following records start is unknown: skipping them silently would lose lines.
      throw new ImportFileError(
        `Line ${at}, field ${field}: a quoted value goes on after its closing quote (a quote inside a quoted value must be doubled). The import stops at the record starting on line ${start}; the lines before it were imported. Fix the quote and run again.`,
      );
    case 'CSV_MAX_RECORD_SIZE':
      throw new ImportFileError(`The record starting on line ${start} runs past ${MAX_RECORD_BYTES} bytes: a quote is probably never closed. The lines before it were imported.`);
    default:
      return err.message;
  }
}

/**
 * The CSV records of the decoded lines, streamed through csv-parse (RFC 4180: values in double
 * quotes may hold commas, doubled quotes and line ends; blank lines between records are skipped).
 * A record csv-parse cannot read fails alone, in its place among the others.
 */
async function* csvRecords(lines: AsyncIterable<TextLine>): AsyncGenerator<CsvRecord> {
  const invalid = new Map<number, string>();
  const parser: Parser = parse({
    info: true,
    raw: true,
    record_delimiter: '\n',
    skip_empty_lines: true,
    relax_column_count: true,
    skip_records_with_error: true,
    max_record_size: MAX_RECORD_BYTES,
    on_skip: (err, raw) => {
      if (err !== undefined) parser.push({ skipped: err, raw: raw ?? '' });
      return undefined;
    },
  });
  pipeline(Readable.from(csvText(lines, invalid)), parser, () => undefined);
  for await (const out of parser as AsyncIterable<ParserOutput>) {
    const reported = 'skipped' in out ? out.skipped.lines : out.info.lines;
    const line = startLine(typeof reported === 'number' ? reported : 0, out.raw);
    const end = Math.max(line, typeof reported === 'number' ? reported : 0);
    yield* strayInvalid(invalid, line);
    if ('skipped' in out) {
      const reason = skipReason(out.skipped, line); // throws when the file cannot be followed past it
      yield { line, reason: takeInvalid(invalid, line, end) ?? reason };
    } else {
      const badBytes = takeInvalid(invalid, line, end);
      yield badBytes === undefined ? { line, fields: out.record } : { line, reason: badBytes };
    }
  }
  yield* strayInvalid(invalid, Infinity);
}
