/**
 * The CSV side of an import, streamed through csv-parse: each record's starting line,
 * quoting (commas, doubled quotes, line ends inside values), blank lines, broken quotes failing
 * their record or stopping the import where the file can no longer be followed, bytes invalid in
 * the encoding failing their record without its text ever being kept, and records coming out while
 * the file is still being read.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ImportFileError, importRecords, type ImportKind, type ImportRecord } from '../../../cli/import-file.js';
import { openTextLines, type ImportEncoding, type TextLine } from '../../../cli/import-text.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-import-csv-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** The records of a file as the CLI reads it, and the error that stopped it, if any. */
async function read(kind: ImportKind, content: string | Buffer, encoding?: ImportEncoding): Promise<{ records: ImportRecord[]; stopped?: Error }> {
  const file = path.join(dir, `f${files++}.csv`);
  fs.writeFileSync(file, content);
  const { lines } = await openTextLines(file, encoding);
  const records: ImportRecord[] = [];
  try {
    for await (const r of importRecords(kind, lines, 'csv')) records.push(r);
  } catch (err) {
    return { records, stopped: err as Error };
  }
  return { records };
}
const linesOf = (records: ImportRecord[]): number[] => records.map((r) => ('line' in r ? r.line.line : r.failure.line));

describe('CSV records through csv-parse', () => {
  it('quoted commas, doubled quotes and line ends; blank lines skipped; each record numbered by the line it starts on', async () => {
    const { records, stopped } = await read('providers', 'systemUser,password\r\n\r\n"char,lie","pass""word"\r\n"multi","line1\r\nline2\r\n\r\nline4"\r\n\r\n\r\nlast,pw');
    expect(stopped).toBeUndefined();
    expect(records).toEqual([
      { line: { line: 3, systemUser: 'char,lie', password: 'pass"word' } },
      { line: { line: 4, systemUser: 'multi', password: 'line1\nline2\n\nline4' } },
      { line: { line: 10, systemUser: 'last', password: 'pw' } },
    ]);
  });

  it('a quote inside an unquoted value fails its record alone, with line and field', async () => {
    const { records, stopped } = await read('trips', 'systemUser,dominio,nroSerie\nacme,AB"C,S1\nacme,OK1,S2\n');
    expect(stopped).toBeUndefined();
    expect(records[0]).toEqual({ failure: { line: 2, reason: expect.stringMatching(/line 2, field 2: a quote inside a value/) as unknown } });
    expect(records[1]).toEqual({ line: { line: 3, systemUser: 'acme', dominio: 'OK1', nroSerie: 'S2' } });
  });

  it('a quote never closed fails the record it opens, on the line it opens; the records before are read', async () => {
    const { records, stopped } = await read('trips', 'systemUser,dominio,nroSerie\nacme,OK1,S1\n\n"acme,OK2,S2\nacme,OK3,S3\n');
    expect(stopped).toBeUndefined();
    expect(linesOf(records)).toEqual([2, 4]);
    expect(records[1]).toEqual({ failure: { line: 4, reason: expect.stringMatching(/never closed/) as unknown } });
  });

  it('text after a closing quote stops the import there (what follows cannot be cut into records); the records before are read', async () => {
    const { records, stopped } = await read('trips', 'systemUser,dominio,nroSerie\nacme,OK1,S1\n"acme"x,OK2,S2\nacme,OK3,S3\n');
    expect(linesOf(records)).toEqual([2]);
    expect(stopped).toBeInstanceOf(ImportFileError);
    expect(stopped?.message).toMatch(/Line 3, field 1: a quoted value goes on after its closing quote.*line 3/);
  });

  it('a record past 64 KiB stops the import at the line it starts on', async () => {
    const { records, stopped } = await read('trips', `systemUser,dominio,nroSerie\nacme,OK1,S1\nacme,"${'x\n'.repeat(40_000)}`);
    expect(linesOf(records)).toEqual([2]);
    expect(stopped).toBeInstanceOf(ImportFileError);
    expect(stopped?.message).toMatch(/record starting on line 3 runs past 65536 bytes/);
  });

  it('bytes invalid in the encoding fail the record holding them (multi-line too), never its text; the records after keep their lines', async () => {
    const bad = Buffer.concat([Buffer.from('systemUser,password\ngood1,secret-1\nbad1,"first\nsecond'), Buffer.from([0xf1]), Buffer.from('"\ngood2,"a,b"\n')]);
    const { records, stopped } = await read('providers', bad, 'utf-8');
    expect(stopped).toBeUndefined();
    expect(records).toEqual([
      { line: { line: 2, systemUser: 'good1', password: 'secret-1' } },
      { failure: { line: 3, reason: expect.stringMatching(/^byte 0xf1 at line 4, column 7 is not valid UTF-8/) as unknown } },
      { line: { line: 5, systemUser: 'good2', password: 'a,b' } },
    ]);
  });

  it('a UTF-16 file cut in the middle of a character fails its last line alone', async () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('systemUser,password\nu16,secret-1\n', 'utf16le'), Buffer.from([0x41])]);
    const { records, stopped } = await read('providers', utf16);
    expect(stopped).toBeUndefined();
    expect(records).toEqual([
      { line: { line: 2, systemUser: 'u16', password: 'secret-1' } },
      { failure: { line: 3, reason: expect.stringMatching(/line 3 is not valid UTF-16LE/) as unknown } },
    ]);
  });

  it('a header that cannot be read, or none, stops the import before any record', async () => {
    expect((await read('providers', '')).stopped?.message).toMatch(/empty/);
    expect((await read('providers', '"systemUser,password\n')).stopped?.message).toMatch(/The header \(line 1\): .*never closed/);
  });

  it('records come out while the lines are still being read (constant memory)', async () => {
    let pulled = 0;
    async function* endless(): AsyncGenerator<TextLine> {
      yield { line: 1, text: 'systemUser,dominio,nroSerie' };
      for (let n = 2; n <= 2_000_000; n++) {
        pulled = n;
        yield { line: n, text: `acme,D${n},S` };
      }
    }
    const records = importRecords('trips', endless(), 'csv');
    const first = await records.next();
    expect(first.value).toEqual({ line: { line: 2, systemUser: 'acme', dominio: 'D2', nroSerie: 'S' } });
    // Only what the stream buffers between the lines and csv-parse has been read, not the two million lines.
    expect(pulled).toBeLessThan(50_000);
    await records.return(undefined);
  });
});
