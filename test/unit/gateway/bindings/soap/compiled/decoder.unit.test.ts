/**
 * The compiled SOAP decoder (gateway/bindings/soap/compiled/) against the interpreted path it
 * replaced (node tree + decodeSoapArguments, kept as the reference): the rules one by one with
 * their expected values, slot reuse between requests, an operation with scalar array items (none
 * of the catalogue's has one), and a fixed-seed differential run on structure-stressing bodies.
 * The long runs are in compiled-campaign.embedded.test.ts and, on every generated and mutated
 * envelope, in scanner-campaign.embedded.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ArrayOfInt, Comando, findOperation, type OperationDef } from '../../../../../../shared/catalogue/index.js';
import { InvalidValueError, NO_EXTRAS, todayIn, type DecodedCall } from '../../../../../../gateway/bindings/arguments.js';
import { decodeSoapArguments } from '../../../../../differential/reference/soap-arguments.js';
import { EnvelopeScanner } from '../../../../../differential/reference/envelope-builder.js';
import { CallScanner } from '../../../../../../gateway/bindings/soap/compiled/call-builder.js';
import { SoapArgumentDecoders, catalogPlans } from '../../../../../../gateway/bindings/soap/compiled/argument-decoder.js';
import { compareCompiled, runStructureCampaign } from '../../../../../differential/compiled-oracle.js';

const TODAY = todayIn('UTC', () => Date.UTC(2026, 10, 22, 12, 0, 0));
const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';

function env(body: string): Buffer {
  return Buffer.from(`<s:Envelope xmlns:s="${SOAP11}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><s:Body>${body}</s:Body></s:Envelope>`, 'utf8');
}

const reference = new EnvelopeScanner();

/** Both paths on one body for `op` (the Body's operation, or any op for an empty Body). */
function both(op: OperationDef, body: Buffer, plans = catalogPlans, scanner = new CallScanner(plans)): { compiled: DecodedCall; interpreted: DecodedCall } {
  reference.reset({ bom: true, stopOnForeignEncoding: false });
  reference.write(body);
  const interpreted = decodeSoapArguments(op, reference.end().operation?.children ?? [], TODAY);
  scanner.reset({ bom: true, stopOnForeignEncoding: false });
  scanner.write(body);
  const compiled = plans.decode(op, scanner.end().record, TODAY);
  return { compiled, interpreted };
}

function decode(opName: string, body: Buffer): DecodedCall {
  const op = findOperation(opName)!;
  const { compiled, interpreted } = both(op, body);
  expect(compiled).toStrictEqual(interpreted);
  expect([...compiled.extras]).toEqual([...interpreted.extras]);
  return compiled;
}

const insert = (children: string) => env(`<LoginYInsertarEvento xmlns="http://tempuri.org/">${children}</LoginYInsertarEvento>`);
const batch = (children: string) => env(`<LoginYInsertarEventos xmlns="http://tempuri.org/">${children}</LoginYInsertarEventos>`);

describe('compiled SOAP decoder: the reference rules, with their values', () => {
  it('the first occurrence of a parameter wins, even when it is nil; missing ones take the defaults', () => {
    const { args } = decode('LoginYInsertarEvento', insert('<SystemUser>a</SystemUser><SystemUser>b</SystemUser><Password xsi:nil="true"/><Password>p</Password><Latitud>1.5</Latitud>'));
    expect(args['SystemUser']).toBe('a');
    expect(args['Password']).toBeNull();
    expect(args['Latitud']).toBe(1.5);
    expect(args['Longitud']).toBe(0);
    expect(args['Dominio']).toBeNull();
    expect(args['FechaHoraEvento']).toBeNull();
  });

  it("an element's text is its own character data around child elements (mixed content), references and CDATA resolved", () => {
    const { args } = decode('LoginYInsertarEvento', insert('<Dominio>A<b>ignored</b>B&amp;<![CDATA[<C>]]><!--x-->D</Dominio>'));
    expect(args['Dominio']).toBe('AB&<C>D');
  });

  it('doubles keep NaN and -0; dateTime keeps its text beside the parsed value', () => {
    const { args } = decode('LoginYInsertarEvento', insert('<Latitud>x</Latitud><Longitud>-0</Longitud><FechaHoraEvento>2026-11-22 12:00:00</FechaHoraEvento>'));
    expect(args['Latitud']).toBeNaN();
    expect(Object.is(args['Longitud'], -0)).toBe(true);
    expect(args['FechaHoraEvento']).toMatchObject({ text: '2026-11-22 12:00:00', parsed: { year: 2026, month: 11, day: 22, hour: 12 } });
  });

  it('extras: undeclared leaf text elements by first occurrence, in order; never nil, nested or Object.prototype names', () => {
    const { extras } = decode(
      'LoginYInsertarEvento',
      insert('<Rumbo>90</Rumbo><Crudo><x/>raw</Crudo><Crudo>late</Crudo><A xsi:nil="true"/><toString>t</toString><__proto__>p</__proto__><Rumbo>180</Rumbo><Z>z</Z>'),
    );
    expect([...extras]).toEqual([
      ['Rumbo', '90'],
      ['Z', 'z'],
    ]);
  });

  it('no extras share one empty map (no allocation per request)', () => {
    const { extras } = decode('LoginYInsertarEvento', insert('<SystemUser>a</SystemUser>'));
    expect(extras).toBe(NO_EXTRAS);
    expect(extras.size).toBe(0);
  });

  it('array items: only elements named as the item type; the first field occurrence wins; a nil item still has its fields read', () => {
    const { args } = decode(
      'LoginYInsertarEventos',
      batch(
        '<Eventos><pEvento><Dominio>A</Dominio><Dominio>B</Dominio><Velocidad>5</Velocidad><Deeper><Dominio>C</Dominio></Deeper></pEvento>' +
          '<Otro><Dominio>X</Dominio></Otro><pEvento xsi:nil="true"><Codigo>7</Codigo></pEvento><pEvento/></Eventos><Eventos><pEvento/></Eventos>',
      ),
    );
    const events = args['Eventos'] as Record<string, unknown>[];
    expect(events).toHaveLength(3);
    expect(events[0]).toMatchObject({ Dominio: 'A', Velocidad: 5, Codigo: null });
    expect(events[1]).toMatchObject({ Dominio: null, Codigo: '7' });
    expect(events[2]).toMatchObject({ Dominio: null, Latitud: 0, FechaHoraEvento: null });
  });

  it('a nil or missing array is null', () => {
    expect(decode('LoginYInsertarEventos', batch('<Eventos xsi:nil="1"><pEvento><Dominio>A</Dominio></pEvento></Eventos>')).args['Eventos']).toBeNull();
    expect(decode('LoginYInsertarEventos', batch('<SystemUser>u</SystemUser>')).args['Eventos']).toBeNull();
  });

  it('an unreadable int is the same InvalidValueError, naming the item field', () => {
    const body = env('<ComandoProcesado xmlns="http://tempuri.org/"><NUMERO>1.5</NUMERO><correcto>true</correcto></ComandoProcesado>');
    const op = findOperation('ComandoProcesado')!;
    const scanner = new CallScanner(catalogPlans);
    scanner.reset({ bom: true, stopOnForeignEncoding: false });
    scanner.write(body);
    const record = scanner.end().record;
    expect(() => catalogPlans.decode(op, record, TODAY)).toThrow(InvalidValueError);
    expect(() => catalogPlans.decode(op, record, TODAY)).toThrow(/1\.5/);
    expect(compareCompiled(body, [])).toBeNull();
  });

  it('an empty Body gives every operation its defaults; a record of another operation is refused', () => {
    const empty = env('');
    for (const name of ['Login', 'LoginYInsertarEventos', 'ComandoProcesado']) decode(name, empty);
    const scanner = new CallScanner(catalogPlans);
    scanner.reset({ bom: true, stopOnForeignEncoding: false });
    scanner.write(insert('<SystemUser>a</SystemUser>'));
    const record = scanner.end().record;
    expect(() => catalogPlans.decode(findOperation('Login')!, record, TODAY)).toThrow(/no compiled plan/);
  });
});

describe('compiled SOAP decoder: slots reused from request to request', () => {
  it('a second body on the same scanner sees nothing of the first', () => {
    const scanner = new CallScanner(catalogPlans);
    const op = findOperation('LoginYInsertarEventos')!;
    const items = Array.from({ length: 3000 }, (_, i) => `<pEvento><Dominio>D${i}</Dominio><Codigo>${i}</Codigo></pEvento>`).join('');
    const first = both(op, batch(`<SystemUser>u</SystemUser><Rumbo>1</Rumbo><Eventos>${items}</Eventos>`), catalogPlans, scanner);
    expect((first.compiled.args['Eventos'] as unknown[]).length).toBe(3000);
    expect(first.compiled).toStrictEqual(first.interpreted);
    const second = both(op, batch('<Eventos><pEvento><Codigo>x</Codigo></pEvento></Eventos>'), catalogPlans, scanner);
    expect(second.compiled).toStrictEqual(second.interpreted);
    expect(second.compiled.args['SystemUser']).toBeNull();
    expect(second.compiled.extras).toBe(NO_EXTRAS);
    expect(second.compiled.args['Eventos']).toEqual([expect.objectContaining({ Dominio: null, Codigo: 'x' })]);
  });
});

describe('compiled SOAP decoder: scalar array items (ArrayOfInt as a parameter)', () => {
  const Numeros: OperationDef = {
    name: 'Numeros',
    documentation: 'test only',
    authentication: 'none',
    params: [
      { name: 'Lista', type: ArrayOfInt },
      { name: 'Comandos', type: { kind: 'array', name: 'ArrayOfComando', item: Comando } },
      { name: 'Flag', type: 'boolean' },
    ],
    result: { kind: 'scalar', name: 'boolean', type: 'boolean' },
  };
  const plans = new SoapArgumentDecoders([Numeros]);
  const call = (children: string) => both(Numeros, env(`<Numeros>${children}</Numeros>`), plans);

  it('every child element is an item whatever its name; nil items take the default', () => {
    const { compiled, interpreted } = call('<Lista><int>1</int><x>2</x><int xsi:nil="true"/><int>3<y>9</y>4</int></Lista><Flag>True</Flag>');
    expect(compiled).toStrictEqual(interpreted);
    expect(compiled.args).toEqual({ Lista: [1, 2, 0, 34], Comandos: null, Flag: true });
  });

  it('an unreadable item is the InvalidValueError of the parameter, as the reference', () => {
    const failure = (f: () => unknown) => {
      try {
        f();
        return null;
      } catch (err) {
        return err instanceof InvalidValueError ? [err.param, err.message] : err;
      }
    };
    const body = env('<Numeros><Lista><int>1</int><int>z</int></Lista></Numeros>');
    const scanner = new CallScanner(plans);
    scanner.reset({ bom: true, stopOnForeignEncoding: false });
    scanner.write(body);
    const record = scanner.end().record;
    reference.reset({ bom: true, stopOnForeignEncoding: false });
    reference.write(body);
    const children = reference.end().operation?.children ?? [];
    const compiled = failure(() => plans.decode(Numeros, record, TODAY));
    expect(compiled).toEqual(['Lista', expect.stringContaining('z')]);
    expect(compiled).toEqual(failure(() => decodeSoapArguments(Numeros, children, TODAY)));
  });
});

describe('compiled SOAP decoder against the interpreted one: differential', () => {
  it('agrees on 2,000 structure-stressing bodies (fixed seed, random chunking)', () => {
    const tally = runStructureCampaign(20261125, 2_000);
    expect(tally.mismatches.slice(0, 2)).toEqual([]);
    // Both sides of each decision are exercised.
    expect(tally.decoded).toBeGreaterThan(1_000);
    expect(tally.faults).toBeGreaterThan(100);
    expect(tally.withExtras).toBeGreaterThan(300);
    expect(tally.withItems).toBeGreaterThan(100);
  });
});
