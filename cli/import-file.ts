import type { TextLine } from './import-text.js';

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

const reasonOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

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
        yield { failure: { line: l.line, reason: err instanceof SyntaxError ? `not JSON: ${err.message}` : reasonOf(err) } };
      }
    }
    return;
  }
  const csv = new CsvRecords();
  let columns: string[] | null = null;
  for await (const l of lines) {
    const record = csv.push(l);
    if (record === null) continue;
    if (columns === null) {
      if (record.invalid !== undefined) throw new ImportFileError(`The header: ${record.invalid}`);
      columns = headerColumns(kind, record.fields);
      continue;
    }
    yield recordOf(kind, columns, record);
  }
  const open = csv.end();
  if (open !== null) {
    yield { failure: { line: open.line, reason: 'a quoted value starting on this line is never closed (the rest of the file is part of it).' } };
  } else if (columns === null) {
    throw new ImportFileError('The file is empty; it needs a header row.');
  }
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
  if (record.invalid !== undefined) return { failure: { line, reason: record.invalid } };
  if (record.error !== undefined) return { failure: { line, reason: record.error } };
  try {
    if (record.fields.length !== columns.length) throw new Error(`expected ${columns.length} fields (${columns.join(', ')}), got ${record.fields.length}.`);
    return { line: toLine(kind, line, Object.fromEntries(columns.map((c, i) => [c, record.fields[i] ?? '']))) };
  } catch (err) {
    return { failure: { line, reason: reasonOf(err) } };
  }
}

interface CsvRecord {
  /** Where the record starts. */
  line: number;
  fields: string[];
  /** A line of it could not be read in the file's encoding. */
  invalid?: string;
  /** Its quoting is broken. */
  error?: string;
}

/** A record longer than this is a quote never closed, not data: the import stops rather than hold the file. */
const MAX_RECORD_CHARS = 64 * 1024;

/**
 * RFC 4180 CSV fed one line at a time: comma-separated, values in double quotes may hold commas,
 * doubled quotes and line ends. Blank lines between records are skipped.
 */
class CsvRecords {
  private fields: string[] = [];
  private field = '';
  private quoted = false;
  private afterQuote = false;
  private start = 0;
  private size = 0;
  private invalid: string | undefined;
  private error: string | undefined;

  /** The record this line completes, or null (blank line, or a quoted value goes on). */
  push({ line, text, invalid }: TextLine): CsvRecord | null {
    const continuing = this.quoted;
    if (!continuing) {
      if (text === '' && invalid === undefined) return null;
      this.start = line;
    }
    this.invalid ??= invalid;
    this.size += text.length;
    if (this.size > MAX_RECORD_CHARS) {
      throw new ImportFileError(`The record starting on line ${this.start} runs past ${MAX_RECORD_CHARS} characters: a quote is probably never closed. The lines before it were imported.`);
    }
    for (let i = 0; i < text.length; i++) {
      const c = text.charAt(i);
      if (this.quoted) {
        if (c !== '"') this.field += c;
        else if (text[i + 1] === '"') {
          this.field += '"';
          i++;
        } else {
          this.quoted = false;
          this.afterQuote = true;
        }
      } else if (c === ',') {
        this.fields.push(this.field);
        this.field = '';
        this.afterQuote = false;
      } else if (c === '"' && this.field === '' && !this.afterQuote) {
        this.quoted = true;
      } else {
        if (this.afterQuote || c === '"') this.error ??= `column ${i + 1}: a quote inside a value must be doubled, and the value quoted.`;
        this.field += c;
      }
    }
    if (this.quoted) {
      this.field += '\n';
      return null;
    }
    this.fields.push(this.field);
    const record: CsvRecord = { line: this.start, fields: this.fields };
    if (this.invalid !== undefined) record.invalid = this.invalid;
    if (this.error !== undefined) record.error = this.error;
    this.fields = [];
    this.field = '';
    this.afterQuote = false;
    this.size = 0;
    this.invalid = undefined;
    this.error = undefined;
    return record;
  }

  /** The start of a record left open at the end of the file, or null. */
  end(): { line: number } | null {
    return this.quoted ? { line: this.start } : null;
  }
}
