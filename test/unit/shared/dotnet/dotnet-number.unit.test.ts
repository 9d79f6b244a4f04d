/**
 * Int32.Parse and Double.Parse as .NET runs them (shared/dotnet/dotnet-number.ts), against every
 * Int32 and Double row Mono produced in test/fixtures/dotnet/http-values.json
 * (scripts/dotnet-fixtures): the value (a double bit for bit), or format against overflow. The
 * embedded layer runs the same rows through the server; this is the parser alone, in milliseconds.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDotNetDouble, parseDotNetInt32, type NumberResult } from '../../../../shared/dotnet/dotnet-number.js';
import { FIXTURES } from '../../../helpers/paths.js';

interface Row {
  type: string;
  text: string;
  ok: boolean;
  value?: string;
  bits?: string;
  exception?: string;
}

const rows = (JSON.parse(readFileSync(path.join(FIXTURES, 'dotnet', 'http-values.json'), 'utf8')) as { cases: Row[] }).cases;
const of = (type: string): Row[] => rows.filter((r) => r.type === type);

function bitsOf(x: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  return view.getBigUint64(0).toString(16).padStart(16, '0');
}

const failureOf = (exception: string | undefined): string => (exception === 'System.OverflowException' ? 'overflow' : 'format');

/** What the row says .NET did, in the parser's terms. */
function expected(row: Row): { ok: true; value: string } | { ok: false; failure: string } {
  return row.ok ? { ok: true, value: row.type === 'System.Double' ? row.bits! : row.value! } : { ok: false, failure: failureOf(row.exception) };
}

function actual(row: Row, r: NumberResult): { ok: true; value: string } | { ok: false; failure: string } {
  if (!r.ok) return { ok: false, failure: r.failure };
  if (row.type !== 'System.Double') return { ok: true, value: String(r.value) };
  // .NET's NaN has the sign bit set (fff8...), V8's does not; a NaN is any NaN to a client.
  return { ok: true, value: Number.isNaN(r.value) && row.value === 'NaN' ? row.bits! : bitsOf(r.value) };
}

describe('.NET number parsing against Mono', () => {
  it('has the rows it needs: successes, format errors and overflows of both types', () => {
    for (const type of ['System.Int32', 'System.Double']) {
      const r = of(type);
      expect(r.some((x) => x.ok)).toBe(true);
      expect(r.some((x) => x.exception === 'System.FormatException')).toBe(true);
      expect(r.some((x) => x.exception === 'System.OverflowException')).toBe(true);
    }
  });

  const mismatches = (type: string, parse: (text: string) => NumberResult) =>
    of(type).flatMap((row) => {
      const got = actual(row, parse(row.text));
      const want = expected(row);
      return JSON.stringify(got) === JSON.stringify(want) ? [] : [{ text: row.text, got, want }];
    });

  it('Int32.Parse: every row', () => {
    expect(mismatches('System.Int32', parseDotNetInt32)).toEqual([]);
  });

  it('Double.Parse: every row, bit for bit', () => {
    expect(mismatches('System.Double', parseDotNetDouble)).toEqual([]);
  });
});
