import { CambiarClave } from './operations/CambiarClave.js';
import { ComandoProcesado } from './operations/ComandoProcesado.js';
import { ConsultarVehiculosEnViaje } from './operations/ConsultarVehiculosEnViaje.js';
import { EstadoComando } from './operations/EstadoComando.js';
import { InSession } from './operations/InSession.js';
import { InsertarEvento } from './operations/InsertarEvento.js';
import { Login } from './operations/Login.js';
import { LoginYCambiarClave } from './operations/LoginYCambiarClave.js';
import { LoginYComandoProcesado } from './operations/LoginYComandoProcesado.js';
import { LoginYEstadoComando } from './operations/LoginYEstadoComando.js';
import { LoginYInsertarEvento } from './operations/LoginYInsertarEvento.js';
import { LoginYInsertarEvento2 } from './operations/LoginYInsertarEvento2.js';
import { LoginYInsertarEventos } from './operations/LoginYInsertarEventos.js';
import { LoginYObtenerComando } from './operations/LoginYObtenerComando.js';
import { Logout } from './operations/Logout.js';
import { ObtenerComando } from './operations/ObtenerComando.js';
import type { pEvento, ResultValues } from './complex-types.js';
import { isArrayParam, type ArgsOf, type FieldsValue, type OperationDef, type ScalarField } from './types.js';

/**
 * The operation catalogue, in the deployed service's declaration order: the order its WSDL lists
 * operations in, which the generated WSDL keeps (the help page sorts them by name, as ASMX does).
 * Adding an operation: one file in operations/, one line here, one handler.
 */
export const operations = {
  Login,
  Logout,
  InsertarEvento,
  LoginYInsertarEventos,
  LoginYInsertarEvento,
  LoginYInsertarEvento2,
  InSession,
  ObtenerComando,
  ComandoProcesado,
  EstadoComando,
  CambiarClave,
  LoginYCambiarClave,
  LoginYObtenerComando,
  LoginYComandoProcesado,
  LoginYEstadoComando,
  ConsultarVehiculosEnViaje,
} as const;

export type Operations = typeof operations;
export type OperationName = keyof Operations;
export type Args<N extends OperationName> = ArgsOf<Operations[N]>;
export type Result<N extends OperationName> = ResultValues[Operations[N]['result']['name']];

/** Every operation, in declaration order. */
export const operationList: readonly OperationDef[] = Object.values(operations);

/** Every operation sorted by name (ordinal), the order of the help page. */
export const operationsByName: readonly OperationDef[] = [...operationList].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

const byName = new Map<string, OperationDef>(operationList.map((op) => [op.name, op]));

/** Exact (case-sensitive) lookup, as ASMX does. */
export function findOperation(name: string): OperationDef | undefined {
  return byName.get(name);
}

/** Every scalar a client sends: top-level parameters and the fields of array items. */
function sentScalars(op: OperationDef): readonly ScalarField[] {
  return op.params.flatMap((p) => (!isArrayParam(p) ? [p] : typeof p.type.item === 'string' ? [] : p.type.item.fields));
}

/** The names of every `secret` parameter or item field, in any operation (what logs redact). */
export const secretNames: readonly string[] = [...new Set(operationList.flatMap((op) => sentScalars(op).filter((f) => f.secret === true).map((f) => f.name)))];

/** The parameter of `op` that carries a credential, or undefined when it has none. */
export function credentialParam(op: OperationDef, credential: 'systemUser' | 'password'): string | undefined {
  return op.params.find((p) => !isArrayParam(p) && p.credential === credential)?.name;
}

type KeysOfUnion<U> = U extends unknown ? keyof U : never;
type ValueIn<U, K extends PropertyKey> = U extends { readonly [P in K]: infer V } ? V : never;
type EventOperation = 'InsertarEvento' | 'LoginYInsertarEvento' | 'LoginYInsertarEvento2';
type EventArgs = Args<EventOperation>;
type EventItem = FieldsValue<(typeof pEvento)['fields']>;
type CredentialNames = 'SystemUser' | 'Password';

/**
 * One event as the operation layer takes it, computed from the catalogue: the fields of `pEvento`
 * (every event operation has them), and, optional, each further field a single-event operation
 * declares (Rumbo, Crudo, Valido, Sensores), typed as declared.
 */
export type EventInput = EventItem & {
  [K in Exclude<KeysOfUnion<EventArgs>, keyof EventItem | CredentialNames>]?: ValueIn<EventArgs, K>;
};

export * from './types.js';
export * from './complex-types.js';
export * from './refusals.js';
export * from './result-codes.js';
