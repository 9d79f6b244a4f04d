/**
 * A real, unchangeable-style client: the `soap` npm package (node-soap) loads our ?wsdl and calls
 * every catalogue operation over SOAP 1.1 and over SOAP 1.2, parsing our responses: the deployed
 * service's in a script with their meaning, then every one with example arguments made from its
 * declaration (so an operation added to the catalogue is called without an edit here).
 */
import * as soap from 'soap';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isArrayParam, operationList, type OperationDef, type ResultType, type ScalarField, type ScalarType } from '../../shared/catalogue/index.js';
import { clientEvent, TestApp } from '../helpers/harness.js';

const ev = clientEvent;

/** A value of each scalar type, within any declared limit (a string too short to be a password). */
const EXAMPLE: Record<ScalarType, unknown> = { string: 'x', int: 1, double: 1.5, boolean: true, dateTime: '2024-05-01T09:00:00Z' };

/** Arguments for `op` made from its declaration: credentials as given, one item per array. */
function exampleArgs(op: OperationDef, creds: Record<string, string>): Record<string, unknown> {
  const scalar = (f: ScalarField): unknown => (f.credential === 'systemUser' ? creds.SystemUser : f.credential === 'password' ? creds.Password : EXAMPLE[f.type]);
  return Object.fromEntries(
    op.params.map((p) => {
      if (!isArrayParam(p)) return [p.name, scalar(p)];
      const item = p.type.item;
      return [p.name, { [typeof item === 'string' ? item : item.name]: [typeof item === 'string' ? EXAMPLE[item] : Object.fromEntries(item.fields.map((f) => [f.name, scalar(f)]))] }];
    }),
  );
}

/** Whether node-soap parsed `value` as the declared result: a boolean, an int, or an element (absent when empty or nil). */
function answersAs(result: ResultType, value: unknown): boolean {
  if (result.kind === 'scalar') return result.type === 'boolean' ? typeof value === 'boolean' : Number.isInteger(value);
  return value === undefined || value === null || typeof value === 'object';
}

describe.each([
  ['SOAP 1.1', 'ServiceSoap', false],
  ['SOAP 1.2', 'ServiceSoap12', true],
] as const)('node-soap over %s', (_label, port, soap12) => {
  let t: TestApp;
  let client: soap.Client;

  beforeAll(async () => {
    t = await TestApp.start();
    await t.provider('acme', 'secret-1');
    await t.app.backends.trips.addVehicle('acme', 'AB123CD', 'SN-1', t.now);
    client = await soap.createClientAsync(`${t.url}?wsdl`, { forceSoap12Headers: soap12 });
  });
  afterAll(() => t.stop());

  /** Calls `op` through the named port, carrying the session cookie like a cookie-aware client. */
  const call = async (op: string, args: Record<string, unknown>, cookie?: string): Promise<{ result: unknown; cookie: string | undefined; raw: string }> => {
    const service = client as unknown as Record<string, Record<string, Record<string, (a: unknown, cb: (err: unknown, res: unknown, raw: string) => void, opts?: unknown, headers?: unknown) => void>>>;
    const method = service.Service![port]![op]!;
    return new Promise((resolve, reject) => {
      method(
        args,
        (err, res, raw) => {
          if (err) { reject(err instanceof Error ? err : new Error('the SOAP client failed with a non-Error', { cause: err })); return; }
          const setCookie = client.lastResponseHeaders?.['set-cookie']?.[0];
          resolve({ result: (res as Record<string, unknown> | null)?.[`${op}Result`], cookie: setCookie?.split(';')[0], raw });
        },
        {},
        cookie ? { Cookie: cookie } : {},
      );
    });
  };

  it("the deployed service's operations, with results parsed by the client", async () => {
    const creds = { SystemUser: 'acme', Password: 'secret-1' };
    const login = await call('Login', creds);
    expect(login.result).toBe(true);
    // The client really spoke the binding under test.
    expect(client.lastRequest).toContain(soap12 ? 'http://www.w3.org/2003/05/soap-envelope' : 'http://schemas.xmlsoap.org/soap/envelope/');
    expect(login.cookie).toMatch(/^ASP\.NET_SessionId=[a-z0-5]{24}$/);
    const cookie = login.cookie!;
    expect((await call('InSession', {}, cookie)).result).toBe(true);

    const id = (await call('InsertarEvento', { ...ev('c1'), Rumbo: 90, Crudo: 'raw' }, cookie)).result;
    expect(id).toBeGreaterThan(0);
    const id2 = (await call('LoginYInsertarEvento', { ...creds, ...ev('c2') })).result;
    expect(id2).toBeGreaterThan(id as number);
    const id3 = (await call('LoginYInsertarEvento2', { ...creds, ...ev('c3'), Valido: true, Sensores: { pSensor: [{ Clave: 'temp', Valor: '21' }] } })).result;
    expect(id3).toBeGreaterThan(id2 as number);
    const batch = (await call('LoginYInsertarEventos', { ...creds, Eventos: { pEvento: [ev('c4'), { ...ev('c5'), FechaHoraEvento: 'bad' }] } })).result as { int: unknown[] };
    expect(batch.int).toHaveLength(2);
    expect(Number(batch.int[0])).toBeGreaterThan(id3 as number);
    expect(Number(batch.int[1])).toBe(-3);

    expect((await call('ObtenerComando', {}, cookie)).result ?? null).toBeNull();
    const { numero } = await t.app.backends.commands.enqueue({ systemUser: 'acme', cmd: 'CC', unidad: 'AB123CD', equipo: '42', now: t.now, expiresAt: t.now + 3_600_000 });
    const cmd = (await call('ObtenerComando', {}, cookie)).result as Record<string, unknown>;
    expect(cmd).toMatchObject({ CMD: 'CC', UNIDAD: 'AB123CD', EQUIPO: '42' });
    expect(Number(cmd.NUMERO)).toBe(numero);
    const again = (await call('LoginYObtenerComando', creds)).result as Record<string, unknown>;
    expect(Number(again.NUMERO)).toBe(numero);
    expect((await call('EstadoComando', { NUMERO: numero, MSG: 'sent' }, cookie)).result).toBe(true);
    expect((await call('LoginYEstadoComando', { ...creds, NUMERO: numero, MSG: 'ack' })).result).toBe(true);
    expect((await call('ComandoProcesado', { NUMERO: numero, correcto: true }, cookie)).result).toBe(true);
    expect((await call('LoginYComandoProcesado', { ...creds, NUMERO: numero, correcto: true })).result).toBe(true);

    const vehicles = (await call('ConsultarVehiculosEnViaje', creds)).result as { Vehiculo: Record<string, unknown>[] };
    expect(vehicles.Vehiculo).toHaveLength(1);
    expect(vehicles.Vehiculo[0]).toMatchObject({ Dominio: 'AB123CD', NroSerie: 'SN-1' });
    expect(new Date(vehicles.Vehiculo[0]!.FechaUltimoReporte as string).toISOString()).toBe('2026-11-22T11:59:30.000Z');

    expect((await call('CambiarClave', { AntiguaClave: 'secret-1', NuevaClave: 'secret-2' }, cookie)).result).toBe(true);
    expect((await call('LoginYCambiarClave', { SystemUser: 'acme', Password: 'secret-2', NuevaClave: 'secret-1' })).result).toBe(true);
    expect((await call('Logout', {}, cookie)).result).toBe(true);
    expect((await call('InSession', {}, cookie)).result).toBe(false);
  });

  it('every operation again, with example arguments from its declaration: an operation added since is called without an edit here', async () => {
    const creds = { SystemUser: 'acme', Password: 'secret-1' };
    const cookie = (await call('Login', creds)).cookie!;
    // Logout last: it ends the session the others use.
    const ops = [...operationList.filter((op) => op.name !== 'Logout'), ...operationList.filter((op) => op.name === 'Logout')];
    for (const op of ops) {
      const { result } = await call(op.name, exampleArgs(op, creds), cookie);
      expect(answersAs(op.result, result), `${op.name} answered ${JSON.stringify(result)}`).toBe(true);
    }
  });

  it('a fault reaches the client as an error', async () => {
    await expect(call('LoginYObtenerComando', { SystemUser: 'acme', Password: 'wrong' })).rejects.toThrow(/Invalid credentials/);
  });
});
