/** Unit tests of the value codecs, time zones and streaming decoders. */
import { describe, expect, it } from 'vitest';
import { BodyDecoder } from '../../../../gateway/transport/body-decoder.js';
import { FormDecoder } from '../../../../gateway/bindings/form/form-decoder.js';
import { parseMediaType } from '../../../../gateway/transport/media-types.js';
import { newSessionId } from '../../../../gateway/service/sessions.js';
import { formatInstant, resolveInstant } from '../../../../shared/dotnet/timezone.js';
import { parseBoolean, parseDouble, parseInt32 } from '../../../../shared/dotnet/values.js';
import { parseXmlDateTime } from '../../../../shared/dotnet/xml-convert.js';

const parseDateTimeText = (text: string) => parseXmlDateTime(text, () => ({ year: 2026, month: 11, day: 22 }));

describe('xsd values', () => {
  it('doubles in invariant culture', () => {
    expect(parseDouble('0')).toBe(0);
    expect(parseDouble('0.0')).toBe(0);
    expect(parseDouble(' 19.432600 ')).toBe(19.4326);
    expect(parseDouble('-34.6037221')).toBe(-34.6037221);
    expect(parseDouble('1E-05')).toBe(0.00001);
    expect(parseDouble('.5')).toBe(0.5);
    expect(parseDouble('INF')).toBe(Infinity);
    expect(parseDouble('-INF')).toBe(-Infinity);
    expect(parseDouble('19,43')).toBeNaN();
    expect(parseDouble('')).toBeNaN();
    expect(parseDouble('0x10')).toBeNaN();
  });

  it('booleans and ints', () => {
    expect(['true', 'TRUE', 'True', '1'].map(parseBoolean)).toEqual([true, true, true, true]);
    expect(['false', 'False', '0'].map(parseBoolean)).toEqual([false, false, false]);
    expect(parseBoolean('yes')).toBeUndefined();
    expect(parseInt32('42')).toBe(42);
    expect(parseInt32('-2147483648')).toBe(-2147483648);
    expect(parseInt32('2147483648')).toBeUndefined();
    expect(parseInt32('4.2')).toBeUndefined();
  });

  it('dateTimes with 0 to 7+ fraction digits, Z, offsets or nothing', () => {
    expect(parseDateTimeText('2026-10-02T15:09:01.1691795-03:00')).toEqual({
      year: 2026, month: 10, day: 2, hour: 15, minute: 9, second: 1, ticks: 1691795, offsetMinutes: -180,
    });
    // XmlConvert rounds the 8th fraction digit and beyond half to even into the 7th.
    expect(parseDateTimeText('2026-10-02T15:09:01.123456789Z')?.ticks).toBe(1234568);
    expect(parseDateTimeText('2026-10-02T15:09:01')?.offsetMinutes).toBeNull();
    expect(parseDateTimeText('2024-02-29T00:00:00Z')).not.toBeNull();
    expect(parseDateTimeText('2026-02-29T00:00:00Z')).toBeNull();
    expect(parseDateTimeText('2000-02-29T00:00:00Z')).not.toBeNull();
    expect(parseDateTimeText('1900-02-29T00:00:00Z')).toBeNull();
    expect(parseDateTimeText('2026-04-31T00:00:00Z')).toBeNull();
    expect(parseDateTimeText('2026-12-31T00:00:00Z')?.day).toBe(31);
    expect(parseDateTimeText('2026-13-01T00:00:00Z')).toBeNull();
    expect(parseDateTimeText('2026-00-01T00:00:00Z')).toBeNull();
    expect(parseDateTimeText('2026-10-02T24:00:00Z')).toBeNull();
    expect(parseDateTimeText('2026-10-02')).toMatchObject({ year: 2026, month: 10, day: 2, hour: 0, offsetMinutes: null });
    expect(parseDateTimeText('2026-10-02 10:00')).toBeNull();
  });
});

describe('media types', () => {
  it('parses the lower-cased type and the parameters, quotes removed', () => {
    const soap12 = parseMediaType('Application/SOAP+xml; charset=utf-8; action="http://tempuri.org/Login"');
    expect(soap12.type).toBe('application/soap+xml');
    expect(soap12.params.get('charset')).toBe('utf-8');
    expect(soap12.params.get('action')).toBe('http://tempuri.org/Login');
    expect(parseMediaType('Text/XML; Charset=ISO-8859-1').params.get('charset')).toBe('ISO-8859-1');
    expect(parseMediaType('text/xml;;junk; a = b ').params).toEqual(new Map([['a', 'b']]));
    expect(parseMediaType('').type).toBe('');
  });

  it('answers a repeated value from memory, the same answer as the first time, and stays bounded', () => {
    const first = parseMediaType('text/xml; charset=utf-8');
    expect(parseMediaType('text/xml; charset=utf-8')).toBe(first);
    expect(first.params.get('charset')).toBe('utf-8');
    // Many distinct values (a client varying its header) neither grow memory nor change answers.
    for (let i = 0; i < 2000; i++) expect(parseMediaType(`text/xml; charset=utf-8; n=${i}`).params.get('n')).toBe(String(i));
    const again = parseMediaType('text/xml; charset=utf-8');
    expect(again.type).toBe('text/xml');
    expect(again.params).toEqual(new Map([['charset', 'utf-8']]));
    const long = `application/soap+xml; action="${'a'.repeat(300)}"`;
    expect(parseMediaType(long)).not.toBe(parseMediaType(long));
    expect(parseMediaType(long).params.get('action')).toBe('a'.repeat(300));
  });
});

describe('time zones', () => {
  const dt = (text: string) => parseDateTimeText(text)!;
  it('local times resolve in the zone, across DST', () => {
    expect(resolveInstant(dt('2026-11-22T09:00:00'), 'America/Argentina/Buenos_Aires').epochMs).toBe(Date.UTC(2026, 10, 22, 12));
    expect(resolveInstant(dt('2026-07-01T12:00:00'), 'Europe/Madrid').epochMs).toBe(Date.UTC(2026, 6, 1, 10));
    expect(resolveInstant(dt('2026-01-01T12:00:00'), 'Europe/Madrid').epochMs).toBe(Date.UTC(2026, 0, 1, 11));
    expect(resolveInstant(dt('2026-01-01T12:00:00+05:30'), 'Europe/Madrid').epochMs).toBe(Date.UTC(2026, 0, 1, 6, 30));
  });

  it('formats with Z for UTC, the zone offset otherwise, fraction only when non-zero', () => {
    const at = { epochMs: Date.UTC(2026, 9, 2, 18, 9, 1, 169), subMsTicks: 1795 };
    expect(formatInstant(at, 'UTC')).toBe('2026-10-02T18:09:01.1691795Z');
    expect(formatInstant(at, 'America/Argentina/Buenos_Aires')).toBe('2026-10-02T15:09:01.1691795-03:00');
    expect(formatInstant({ epochMs: Date.UTC(2026, 0, 1), subMsTicks: 0 }, 'UTC')).toBe('2026-01-01T00:00:00Z');
    expect(formatInstant({ epochMs: Date.UTC(2026, 0, 1, 0, 0, 0, 500), subMsTicks: 0 }, 'Asia/Kolkata')).toBe('2026-01-01T05:30:00.5+05:30');
  });
});

describe('streaming decoders', () => {
  it('UTF-8 split inside a multi-byte character, BOM stripped', () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<a>ñ€</a>')]);
    const d = new BodyDecoder('utf-8');
    let out = '';
    for (let i = 0; i < bytes.length; i++) out += d.push(bytes.subarray(i, i + 1), i === bytes.length - 1);
    expect(out).toBe('<a>ñ€</a>');
  });

  it('charset from the XML declaration when the header has none', () => {
    const body = Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><a>ñ</a>', 'latin1');
    const d = new BodyDecoder(null);
    const out = d.push(body.subarray(0, 10), false) + d.push(body.subarray(10), true);
    expect(out).toBe('<?xml version="1.0" encoding="ISO-8859-1"?><a>ñ</a>');
  });

  it('an unknown charset is refused', () => {
    expect(() => new BodyDecoder('x-klingon')).toThrow(/Unsupported charset/);
  });

  it('form fields across chunks, percent-escapes, plus signs and raw UTF-8', () => {
    const f = new FormDecoder();
    const body = Buffer.from('A=1&Dominio=AB%20123&Crudo=a+b%2Bc&N=%C3%B1&Raw=ñ&A=2&Empty=&Flag');
    for (let i = 0; i < body.length; i += 3) f.push(body.subarray(i, i + 3));
    // As ASP.NET's NameValueCollection: a repeated name's values joined with commas.
    expect(Object.fromEntries(f.end())).toEqual({ A: '1,2', Dominio: 'AB 123', Crudo: 'a b+c', N: 'ñ', Raw: 'ñ', Empty: '', Flag: '' });
    expect(FormDecoder.decodeQuery('x=%zz&y=1').get('x')).toBe('%zz');
  });

  it('form field names compare case-insensitively and keep their first spelling', () => {
    const fields = FormDecoder.decodeQuery('systemuser=acme&PASSWORD=s&SystemUser=other');
    expect(fields.get('SystemUser')).toBe('acme,other');
    expect(fields.get('Password')).toBe('s');
    expect([...fields].map(([name]) => name)).toEqual(['systemuser', 'PASSWORD']);
  });
});

describe('session ids', () => {
  it('24 characters of [a-z0-5], different every time', () => {
    const ids = new Set(Array.from({ length: 1000 }, newSessionId));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^[a-z0-5]{24}$/);
  });
});
