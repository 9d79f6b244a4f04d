import { parse } from 'csv-parse/sync';

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

export interface ParsedFile {
  lines: ImportLine[];
  failures: { line: number; reason: string }[];
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
export function detectFormat(fileName: string, text: string): 'csv' | 'jsonl' {
  if (/\.(jsonl|ndjson|json)$/i.test(fileName)) return 'jsonl';
  if (/\.(csv|txt)$/i.test(fileName)) return 'csv';
  return text.replace(/^\uFEFF/, '').trimStart().startsWith('{') ? 'jsonl' : 'csv';
}

export function parseImportFile(kind: ImportKind, text: string, format: 'csv' | 'jsonl'): ParsedFile {
  return format === 'csv' ? parseCsv(kind, text) : parseJsonLines(kind, text);
}

function parseJsonLines(kind: ImportKind, text: string): ParsedFile {
  const result: ParsedFile = { lines: [], failures: [] };
  text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .forEach((raw, i) => {
      const line = i + 1;
      if (raw.trim() === '') return;
      try {
        const value: unknown = JSON.parse(raw);
        if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('a line must be one JSON object.');
        result.lines.push(toLine(kind, line, value as Record<string, unknown>));
      } catch (err) {
        result.failures.push({ line, reason: err instanceof SyntaxError ? `not JSON: ${err.message}` : reasonOf(err) });
      }
    });
  return result;
}

interface CsvRecord {
  record: string[];
  info: { lines: number };
  raw: string;
}

function parseCsv(kind: ImportKind, text: string): ParsedFile {
  let records: CsvRecord[];
  try {
    records = parse(text, { bom: true, info: true, raw: true, skip_empty_lines: true, relax_column_count: true }) as unknown as CsvRecord[];
  } catch (err) {
    // A broken quote makes everything after it unreadable: refuse the file rather than guess.
    throw new ImportFileError(`The CSV cannot be read: ${reasonOf(err)}`);
  }
  const [header, ...rows] = records;
  if (header === undefined) throw new ImportFileError('The file is empty; it needs a header row.');
  const columns = header.record.map((name) => {
    const wanted = COLUMNS[kind].find((c) => c.toLowerCase() === name.trim().toLowerCase());
    if (wanted === undefined) throw new ImportFileError(`Unknown column "${name}" in the header; a ${kind} file has ${COLUMNS[kind].join(', ')}.`);
    return wanted;
  });
  const missing = REQUIRED[kind].filter((c) => !columns.includes(c));
  if (missing.length > 0) throw new ImportFileError(`The header lacks ${missing.join(', ')} (it has ${columns.join(', ')}).`);
  const result: ParsedFile = { lines: [], failures: [] };
  for (const { record, info, raw } of rows) {
    // info.lines is where the record ends; a quoted value may span lines, so count back to its start.
    const line = info.lines - (raw.replace(/^[\r\n]+/, '').replace(/\r?\n$/, '').match(/\n/g)?.length ?? 0);
    try {
      if (record.length !== columns.length) throw new Error(`expected ${columns.length} fields (${columns.join(', ')}), got ${record.length}.`);
      result.lines.push(toLine(kind, line, Object.fromEntries(columns.map((c, i) => [c, record[i] ?? '']))));
    } catch (err) {
      result.failures.push({ line, reason: reasonOf(err) });
    }
  }
  return result;
}
