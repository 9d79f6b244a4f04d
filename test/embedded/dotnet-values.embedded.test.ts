/**
 * Values read as ASMX reads them: every row of the Mono-generated fixtures in
 * test/fixtures/dotnet (scripts/dotnet-fixtures) against the ports in shared/dotnet, then the measured
 * cases end to end through the real server.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ParsedDateTime } from '../../shared/catalogue/types.js';
import type { CivilDate } from '../../shared/dotnet/calendar.js';
import { conversionFailureText } from '../../gateway/bindings/form/form-binding.js';
import { quotedClientText, type ClrScalarType, toBoolean, toDateTime, toDouble, toInt32 } from '../../shared/dotnet/dotnet-convert.js';
import { resolveInstant } from '../../shared/dotnet/timezone.js';
import { parseXmlDateTime } from '../../shared/dotnet/xml-convert.js';
import { credentials, event, NS, TestApp, xmlParams } from '../helpers/harness.js';
import { FIXTURES } from '../helpers/paths.js';

interface FixtureCase {
  type?: ClrScalarType;
  text: string;
  ok: boolean;
  value?: string;
  bits?: string;
  ticks?: string;
  iso?: string;
  kind?: 'Unspecified' | 'Utc' | 'Local';
  utcTicks?: string;
  exception?: string;
  message?: string;
  asmxBody?: string;
}

interface Fixture {
  runtime: string;
  timeZone: string;
  today: string;
  cases: FixtureCase[];
}

function load(name: string): Fixture {
  return JSON.parse(readFileSync(path.join(FIXTURES, 'dotnet', name), 'utf8')) as Fixture;
}

function todayOf(f: Fixture): () => CivilDate {
  const [year, month, day] = f.today.split('-').map(Number) as [number, number, number];
  return () => ({ year, month, day });
}

const EPOCH_TICKS = 621_355_968_000_000_000n;

/** The instant as .NET ticks (UTC): what a Kind=Local/Utc result holds on a UTC server. */
function utcTicksOf(p: ParsedDateTime): bigint {
  const i = resolveInstant(p, 'UTC');
  return BigInt(i.epochMs) * 10_000n + EPOCH_TICKS + BigInt(i.subMsTicks);
}

function bitsOf(x: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  return view.getBigUint64(0).toString(16).padStart(16, '0');
}

/** A mismatch between our DateTime and the fixture's, or null. */
function dateTimeMismatch(c: FixtureCase, ours: ParsedDateTime | null): string | null {
  if (!c.ok) return ours === null ? null : `accepted, .NET throws ${c.exception}`;
  if (ours === null) return `refused, .NET gives ${c.ticks} ${c.kind}`;
  // A zone in the text: .NET converts to the (UTC) server's local time; we keep the offset.
  if ((c.kind === 'Unspecified') !== (ours.offsetMinutes === null)) return `offset ${ours.offsetMinutes}, .NET kind ${c.kind}`;
  const expected = c.kind === 'Unspecified' ? c.ticks : c.utcTicks;
  const got = utcTicksOf(ours).toString();
  return got === expected ? null : `ticks ${got}, .NET ${expected}`;
}

/**
 * Where the gateway knowingly differs: .NET wraps (DateTime.Parse) or clamps (XmlConvert) a zoned
 * value whose instant falls before 0001-01-01 or after 9999-12-31 into a wrong local time; the
 * gateway refuses it (-3), as it refuses every instant outside .NET's range.
 */
const HTTP_DEVIATIONS = ['1/1/0001 00:00:00 +01:00', '0001-01-01T00:00:00+01:00'];
const XML_DEVIATIONS = ['9999-12-31T23:59:59-01:00', '0001-01-01T00:00:00+01:00', '0001-01-01T00:30:00+01:00'];

/**
 * ASMX's body with the quoted client text as the gateway writes it: control characters as `?`
 * (a documented difference, so a CR/LF in a value cannot split the one-line message).
 */
function quoted(asmxBody: string | undefined): string | undefined {
  return asmxBody?.replace(/^Cannot convert ([\s\S]*?) to System\./, (_m, text: string) => `Cannot convert ${quotedClientText(text)} to System.`);
}

describe('HTTP GET/POST values: Convert.ChangeType(text, type, InvariantCulture), per the Mono fixture', () => {
  const fixture = load('http-values.json');
  const today = todayOf(fixture);
  const rows = (type: ClrScalarType) => fixture.cases.filter((c) => c.type === type);

  it('was generated on Mono in UTC from at least 300 inputs', () => {
    expect(fixture.runtime).toMatch(/^Mono /);
    expect(fixture.timeZone).toBe('UTC');
    expect(new Set(fixture.cases.map((c) => c.text)).size).toBeGreaterThanOrEqual(300);
    for (const type of ['System.Int32', 'System.Double', 'System.Boolean', 'System.DateTime'] as const) {
      expect(rows(type).length).toBe(fixture.cases.length / 4);
    }
  });

  it('Int32: every row, and ASMX error text for every failure', () => {
    const wrong = rows('System.Int32').flatMap((c): unknown[] => {
      const r = toInt32(c.text);
      if (c.ok) return r.ok && r.value === Number(c.value) ? [] : [[c.text, r]];
      if (r.ok) return [[c.text, r]];
      const body = conversionFailureText(c.text, 'System.Int32', r.failure);
      return r.failure.exception === c.exception && r.failure.message === c.message && body === quoted(c.asmxBody) ? [] : [[c.text, r, body]];
    });
    expect(wrong).toEqual([]);
  });

  it('Double: every row, bit for bit (NaN is any NaN)', () => {
    const wrong = rows('System.Double').flatMap((c): unknown[] => {
      const r = toDouble(c.text);
      if (!c.ok) return !r.ok && r.failure.exception === c.exception && r.failure.message === c.message ? [] : [[c.text, r]];
      if (!r.ok) return [[c.text, r]];
      const same = c.value === 'NaN' ? Number.isNaN(r.value) : bitsOf(r.value) === c.bits;
      return same ? [] : [[c.text, bitsOf(r.value), c.bits]];
    });
    expect(wrong).toEqual([]);
  });

  it('Boolean: every row, and ASMX error text for every failure', () => {
    const wrong = rows('System.Boolean').flatMap((c): unknown[] => {
      const r = toBoolean(c.text);
      if (c.ok) return r.ok && String(r.value) === c.value ? [] : [[c.text, r]];
      if (r.ok) return [[c.text, r]];
      const body = conversionFailureText(c.text, 'System.Boolean', r.failure);
      return r.failure.message === c.message && body === quoted(c.asmxBody) ? [] : [[c.text, body]];
    });
    expect(wrong).toEqual([]);
  });

  it('DateTime: every row gives the same instant and kind, or fails where .NET throws', () => {
    const wrong = rows('System.DateTime')
      .filter((c) => !HTTP_DEVIATIONS.includes(c.text))
      .flatMap((c): unknown[] => {
        const mismatch = dateTimeMismatch(c, toDateTime(c.text, today));
        return mismatch === null ? [] : [[c.text, mismatch]];
      });
    expect(wrong).toEqual([]);
  });

  it('DateTime: the documented deviations are refused where .NET wraps within 0001-01-01', () => {
    for (const text of HTTP_DEVIATIONS) {
      const row = rows('System.DateTime').find((c) => c.text === text);
      expect(row?.ok, text).toBe(true);
      expect(row?.iso?.startsWith('0001-01-01T23:00:00'), text).toBe(true);
      expect(toDateTime(text, today), text).toBeNull();
    }
  });

  it('the measured cases: a .NET client proxy date, a thousands separator, an unconvertible int', () => {
    expect(toDateTime('11/21/2026 10:00:08', today)).toEqual({
      year: 2026, month: 11, day: 21, hour: 10, minute: 0, second: 8, ticks: 0, offsetMinutes: null,
    });
    expect(toDouble('1,234.5')).toEqual({ ok: true, value: 1234.5 });
    const r = toInt32('2q');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(conversionFailureText('2q', 'System.Int32', r.failure)).toBe(
        'Cannot convert 2q to System.Int32.\r\nParameter name: type ---> Input string was not in a correct format.\r\n',
      );
    }
  });

  it('a time alone takes the given date; only then is the date asked for', () => {
    let asked = 0;
    const counting = () => {
      asked++;
      return { year: 2030, month: 2, day: 3 };
    };
    expect(toDateTime('10:00 PM', counting)).toMatchObject({ year: 2030, month: 2, day: 3, hour: 22 });
    expect(toDateTime('11/21/2026', counting)).toMatchObject({ year: 2026, month: 11, day: 21 });
    expect(asked).toBe(1);
  });
});

describe('SOAP dateTime: XmlConvert.ToDateTime(text, RoundtripKind), per the Mono fixture', () => {
  const fixture = load('xml-datetime.json');
  const today = todayOf(fixture);

  it('was generated on Mono in UTC from at least 100 inputs', () => {
    expect(fixture.runtime).toMatch(/^Mono /);
    expect(fixture.timeZone).toBe('UTC');
    expect(new Set(fixture.cases.map((c) => c.text)).size).toBeGreaterThanOrEqual(100);
  });

  it('every row gives the same instant and kind, or fails where .NET throws', () => {
    const wrong = fixture.cases
      .filter((c) => !XML_DEVIATIONS.includes(c.text))
      .flatMap((c): unknown[] => {
        const mismatch = dateTimeMismatch(c, parseXmlDateTime(c.text, today));
        return mismatch === null ? [] : [[c.text, mismatch]];
      });
    expect(wrong).toEqual([]);
  });

  it('the documented deviations: .NET clamps to DateTime.MinValue/MaxValue, we refuse', () => {
    for (const text of XML_DEVIATIONS) {
      const row = fixture.cases.find((c) => c.text === text);
      expect(row?.ok, text).toBe(true);
      expect(parseXmlDateTime(text, today), text).toBeNull();
    }
  });

  it('kept leniency: a space for the T, which XmlConvert refuses', () => {
    const row = fixture.cases.find((c) => c.text === '2026-11-22 10:00:08');
    expect(row?.ok).toBe(false);
    expect(parseXmlDateTime('2026-11-22 10:00:08', today)).toBeNull();
    expect(parseXmlDateTime('2026-11-22 10:00:08', today, { spaceForT: true })).toEqual({
      year: 2026, month: 11, day: 22, hour: 10, minute: 0, second: 8, ticks: 0, offsetMinutes: null,
    });
    expect(parseXmlDateTime(' 2026-11-22 10:00:08.5-03:00 ', today, { spaceForT: true })).toMatchObject({ ticks: 5_000_000, offsetMinutes: -180 });
    // Only the one space where the T goes.
    expect(parseXmlDateTime('2026-11-22  10:00:08', today, { spaceForT: true })).toBeNull();
  });
});

describe('end to end through the real server', () => {
  let t: TestApp;
  const httpFixture = load('http-values.json');
  const asmxBody = (type: ClrScalarType, text: string): string => {
    const body = httpFixture.cases.find((c) => c.type === type && c.text === text)?.asmxBody;
    if (body === undefined) throw new Error(`no fixture row for ${type} ${text}`);
    return body;
  };
  const latest = async (provider: string) => (await t.app.backends.events.recent({ provider, limit: 1 }))[0]!;
  const intResult = (text: string): number => Number(/<int xmlns="http:\/\/tempuri.org\/">(-?\d+)<\/int>/.exec(text)?.[1]);

  beforeAll(async () => {
    t = await TestApp.start();
    await t.provider('acme', 'secret-1');
    await t.provider('baires', 'secret-1', { timeZone: 'America/Argentina/Buenos_Aires' });
  });
  afterAll(() => t.stop());

  it('HTTP POST: a .NET proxy DateTime and Altitud=1,234.5 are stored, text as sent', async () => {
    const form = { ...credentials('baires'), ...event({ Codigo: 'dotnet-proxy', FechaHoraEvento: '11/21/2026 10:00:08', FechaHoraRecepcion: '11/21/2026 10:00:09', Altitud: '1,234.5' }) };
    const r = await t.post('LoginYInsertarEvento', form);
    expect(r.status).toBe(200);
    expect(intResult(r.text)).toBeGreaterThan(0);
    const stored = await latest('baires');
    expect(stored.codigo).toBe('dotnet-proxy');
    expect(stored.altitud).toBe(1234.5);
    expect(stored.eventTimeText).toBe('11/21/2026 10:00:08');
    // No offset: local time of the provider's zone (UTC-3).
    expect(stored.eventTime).toEqual({ epochMs: Date.UTC(2026, 10, 21, 13, 0, 8), subMsTicks: 0 });
    expect(stored.receptionTime?.epochMs).toBe(Date.UTC(2026, 10, 21, 13, 0, 9));
  });

  it('HTTP GET: RFC 1123 and a time alone (today in TIME_ZONE, from the clock)', async () => {
    const r = await t.get('LoginYInsertarEvento', { ...credentials(), ...event({ Codigo: 'rfc1123', FechaHoraEvento: 'Sat, 21 Nov 2026 10:00:08 GMT', FechaHoraRecepcion: '10:00:08 AM' }) });
    expect(intResult(r.text)).toBeGreaterThan(0);
    const stored = await latest('acme');
    expect(stored.eventTime.epochMs).toBe(Date.UTC(2026, 10, 21, 10, 0, 8));
    expect(stored.receptionTime?.epochMs).toBe(Date.UTC(2026, 10, 22, 10, 0, 8));
  });

  it('HTTP: a date or double .NET cannot read makes the event invalid (-3)', async () => {
    const dayFirst = await t.post('LoginYInsertarEvento', { ...credentials(), ...event({ FechaHoraEvento: '21/11/2026 10:00:08' }) });
    expect(intResult(dayFirst.text)).toBe(-3);
    const decimalComma = await t.post('LoginYInsertarEvento', { ...credentials(), ...event({ Altitud: '1.234,5' }) });
    expect(intResult(decimalComma.text)).toBe(-3);
  });

  it('SOAP: 2026-11-22 is an xs:date, midnight in the provider zone', async () => {
    const r = await t.soap11('LoginYInsertarEvento', xmlParams({ ...credentials('baires'), ...event({ Codigo: 'xs-date', FechaHoraEvento: '2026-11-22', FechaHoraRecepcion: '2026-11-22T00:00:01Z' }) }));
    expect(r.text).toMatch(/<LoginYInsertarEventoResult>[1-9]\d*</);
    const stored = await latest('baires');
    expect(stored.codigo).toBe('xs-date');
    expect(stored.eventTimeText).toBe('2026-11-22');
    expect(stored.eventTime.epochMs).toBe(Date.UTC(2026, 10, 22, 3));
  });

  it('HTTP GET: an unconvertible int or bool answers ASMX exact text, HTML-encoded, over two lines', async () => {
    for (const [params, body] of [
      [{ NUMERO: 'abc', correcto: 'true' }, asmxBody('System.Int32', 'abc')],
      [{ NUMERO: '2147483648', correcto: 'true' }, asmxBody('System.Int32', '2147483648')],
      [{ NUMERO: '<b>1</b>', correcto: 'true' }, asmxBody('System.Int32', '<b>1</b>')],
      [{ NUMERO: '7', correcto: 'yes' }, asmxBody('System.Boolean', 'yes')],
    ] as const) {
      const r = await t.get('LoginYComandoProcesado', { ...credentials(), ...params });
      expect(r.status).toBe(500);
      expect(r.contentType).toBe('text/plain; charset=utf-8');
      expect(r.text).toBe(body);
    }
    expect(asmxBody('System.Int32', '<b>1</b>')).toContain('Cannot convert &lt;b&gt;1&lt;/b&gt; to System.Int32.\r\nParameter name: type');
  });

  it('kept leniency: an HTTP boolean 1 or 0, which bool.Parse refuses', async () => {
    expect(httpFixture.cases.find((c) => c.type === 'System.Boolean' && c.text === '1')?.ok).toBe(false);
    for (const correcto of ['1', '0', ' 1 ', 'TRUE']) {
      const r = await t.post('LoginYComandoProcesado', { ...credentials(), NUMERO: '12345', correcto });
      expect(r.status, correcto).toBe(200);
      expect(r.text).toContain(`<boolean xmlns="${NS}">`);
    }
  });
});
