import fs from 'node:fs';
import path from 'node:path';
import type { AdminClient, ImportResult } from '../gateway/admin/client.js';
import { detectFormat, ImportFileError, importRecords, type ImportKind, type ImportLine } from './import-file.js';
import { openTextLines, type ImportEncoding, type TextLine } from './import-text.js';
import { errorMessage } from '../shared/util/error-message.js';

/** Lines per API call: each provider costs a password hash (tens of ms), trips cost nothing. */
export const CHUNK: Record<ImportKind, number> = { providers: 100, trips: 1000 };
/** Failures the summary shows; the report file has every line. */
const FAILURES_SHOWN = 100;

export interface ImportSummary {
  file: string;
  kind: ImportKind;
  encoding: ImportEncoding;
  lines: number;
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
  /** The first failures by line (at most FAILURES_SHOWN); `report` has them all. */
  failures: { line: number; reason: string }[];
  /** JSON lines: one {line, outcome, reason?} per line of the file that held a record. */
  report: string;
}

export interface ImportOptions {
  format?: 'csv' | 'jsonl';
  encoding?: ImportEncoding;
  /** Where the per-line report goes (default: the file's name + `.report.jsonl`). */
  report?: string;
  progress?: (done: number) => void;
}

/** Appends JSON lines to a file, waiting for the disk when its buffer is full (constant memory). */
class ReportWriter {
  private readonly out: fs.WriteStream;
  constructor(file: string) {
    this.out = fs.createWriteStream(file, { mode: 0o600 });
  }
  async write(entry: { line: number; outcome: string; reason?: string }): Promise<void> {
    if (!this.out.write(`${JSON.stringify(entry)}\n`)) await new Promise<void>((resolve) => this.out.once('drain', resolve));
  }
  close(): Promise<void> {
    return new Promise((resolve, reject) => this.out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
}

/**
 * Imports a file chunk by chunk (one bulk call each) as it is read: memory stays the same whatever
 * the file's size. Bad lines fail alone; the good ones are imported. A call that fails as a whole
 * (API down) stops the import: what was imported stays, and running it again continues, since every
 * line already done is then `unchanged`.
 */
export async function importFile(client: AdminClient, kind: ImportKind, file: string, options: ImportOptions = {}): Promise<ImportSummary> {
  const { encoding, lines } = await openTextLines(file, options.encoding);
  const first = await lines.next();
  const format = options.format ?? detectFormat(path.basename(file), first.done === true ? '' : first.value.text);
  async function* all(): AsyncGenerator<TextLine> {
    if (first.done !== true) yield first.value;
    yield* lines;
  }
  const reportFile = options.report ?? `${file}.report.jsonl`;
  const report = new ReportWriter(reportFile);
  const summary: ImportSummary = { file, kind, encoding, lines: 0, created: 0, updated: 0, unchanged: 0, failed: 0, failures: [], report: reportFile };
  const fail = async (failure: { line: number; reason: string }): Promise<void> => {
    summary.failed++;
    if (summary.failures.length < FAILURES_SHOWN) summary.failures.push(failure);
    await report.write({ line: failure.line, outcome: 'failed', reason: failure.reason });
  };
  let chunk: ImportLine[] = [];
  let sent = 0;
  const send = async (): Promise<void> => {
    if (chunk.length === 0) return;
    let results: ImportResult[];
    try {
      results = await client.importChunk(kind, chunk);
    } catch (err) {
      throw new Error(
        `${errorMessage(err)} — stopped after ${sent} lines sent; what was imported stays, run the same command again to continue.`,
        { cause: err },
      );
    }
    sent += chunk.length;
    chunk = [];
    for (const r of results) {
      if (r.outcome === 'failed') await fail({ line: r.line, reason: r.reason ?? 'refused' });
      else {
        summary[r.outcome]++;
        await report.write({ line: r.line, outcome: r.outcome });
      }
    }
    options.progress?.(sent);
  };
  let unreadable: ImportFileError | undefined;
  try {
    try {
      for await (const record of importRecords(kind, all(), format)) {
        summary.lines++;
        if ('failure' in record) await fail(record.failure);
        else {
          chunk.push(record.line);
          if (chunk.length >= CHUNK[kind]) await send();
        }
      }
    } catch (err) {
      if (!(err instanceof ImportFileError)) throw err;
      unreadable = err; // the file cannot be followed past a point: the records read before it are still sent
    }
    await send();
  } finally {
    await report.close();
  }
  if (unreadable !== undefined) {
    // Before any record, nothing was imported (the caller says so); past some, the lines before it were.
    if (summary.lines === 0) throw unreadable;
    throw new Error(`${file}: ${unreadable.message} Lines sent: ${sent}; every line's outcome is in ${reportFile}.`, { cause: unreadable });
  }
  summary.failures.sort((a, b) => a.line - b.line);
  return summary;
}
