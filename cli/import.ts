import fs from 'node:fs';
import path from 'node:path';
import type { AdminClient, ImportResult } from '../gateway/admin/client.js';
import { detectFormat, parseImportFile, type ImportKind, type ImportLine } from './import-file.js';

/** Lines per API call: each provider costs a password hash (tens of ms), trips cost nothing. */
export const CHUNK: Record<ImportKind, number> = { providers: 100, trips: 1000 };

export interface ImportSummary {
  file: string;
  kind: ImportKind;
  lines: number;
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
  failures: { line: number; reason: string }[];
}

/**
 * Imports a file chunk by chunk (one bulk call each). Bad lines fail alone; the good ones are
 * imported. A call that fails as a whole (API down) stops the import: what was imported stays,
 * and running it again continues, since every line already done is then `unchanged`.
 */
export async function importFile(
  client: AdminClient,
  kind: ImportKind,
  file: string,
  options: { format?: 'csv' | 'jsonl'; progress?: (done: number, total: number) => void } = {},
): Promise<ImportSummary> {
  const text = fs.readFileSync(file, 'utf8');
  const parsed = parseImportFile(kind, text, options.format ?? detectFormat(path.basename(file), text));
  const summary: ImportSummary = {
    file,
    kind,
    lines: parsed.lines.length + parsed.failures.length,
    created: 0,
    updated: 0,
    unchanged: 0,
    failed: 0,
    failures: [...parsed.failures],
  };
  const results: ImportResult[] = [];
  for (let i = 0; i < parsed.lines.length; i += CHUNK[kind]) {
    const chunk: ImportLine[] = parsed.lines.slice(i, i + CHUNK[kind]);
    try {
      results.push(...(await client.importChunk(kind, chunk)));
    } catch (err) {
      const done = results.length;
      throw new Error(
        `${err instanceof Error ? err.message : String(err)} — stopped after ${done} of ${parsed.lines.length} readable lines; what was imported stays, run the same command again to continue.`,
        { cause: err },
      );
    }
    options.progress?.(Math.min(i + CHUNK[kind], parsed.lines.length), parsed.lines.length);
  }
  for (const r of results) {
    summary[r.outcome]++;
    if (r.outcome === 'failed') summary.failures.push({ line: r.line, reason: r.reason ?? 'refused' });
  }
  summary.failed = summary.failures.length;
  summary.failures.sort((a, b) => a.line - b.line);
  return summary;
}
