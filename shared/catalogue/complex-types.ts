import type { ArrayType, ComplexType, ScalarField } from './types.js';

/**
 * Longest text each string accepts (docs/protocol.md, "Limits"). A longer value is answered with
 * the operation's `invalid` refusal (-3 for an event, false for a boolean operation); over-long
 * credentials are "not authenticated". Operators' values (commands, trips) obey the same limits.
 */
export const MAX_LENGTH = {
  systemUser: 64,
  password: 128,
  dominio: 32,
  nroSerie: 64,
  codigo: 32,
  crudo: 8192,
  msg: 2048,
  sensorKey: 64,
  sensorValue: 256,
  /** Comando.CMD, set by operators. */
  cmd: 256,
} as const;

/** Sensor readings per event at most (LoginYInsertarEvento2); more make the event invalid. */
export const MAX_SENSORS = 100;

/** The event fields shared by InsertarEvento, LoginYInsertarEvento and pEvento, in wire order. */
export const EVENT_HEAD = [
  { name: 'Dominio', type: 'string', maxLength: MAX_LENGTH.dominio },
  { name: 'NroSerie', type: 'string', maxLength: MAX_LENGTH.nroSerie },
  { name: 'Codigo', type: 'string', maxLength: MAX_LENGTH.codigo },
  { name: 'Latitud', type: 'double' },
  { name: 'Longitud', type: 'double' },
  { name: 'Altitud', type: 'double' },
  { name: 'Velocidad', type: 'double' },
] as const satisfies readonly ScalarField[];

export const EVENT_TIMES = [
  { name: 'FechaHoraEvento', type: 'dateTime' },
  { name: 'FechaHoraRecepcion', type: 'dateTime' },
] as const satisfies readonly ScalarField[];

export const CREDENTIALS = [
  { name: 'SystemUser', type: 'string', maxLength: MAX_LENGTH.systemUser, credential: 'systemUser' },
  { name: 'Password', type: 'string', maxLength: MAX_LENGTH.password, credential: 'password', secret: true },
] as const satisfies readonly ScalarField[];

export const Comando = {
  kind: 'complex',
  name: 'Comando',
  fields: [
    { name: 'CMD', type: 'string', maxLength: MAX_LENGTH.cmd },
    { name: 'UNIDAD', type: 'string', maxLength: MAX_LENGTH.dominio },
    { name: 'EQUIPO', type: 'string', maxLength: MAX_LENGTH.nroSerie },
    { name: 'NUMERO', type: 'int' },
  ],
} as const satisfies ComplexType;

const Vehiculo = {
  kind: 'complex',
  name: 'Vehiculo',
  fields: [
    { name: 'Dominio', type: 'string' },
    { name: 'NroSerie', type: 'string' },
    { name: 'FechaUltimoReporte', type: 'dateTime', nillable: true },
    { name: 'FechaRegistracion', type: 'dateTime', nillable: true },
  ],
} as const satisfies ComplexType;

export const pEvento = {
  kind: 'complex',
  name: 'pEvento',
  fields: [...EVENT_HEAD, ...EVENT_TIMES],
} as const satisfies ComplexType;

const pSensor = {
  kind: 'complex',
  name: 'pSensor',
  fields: [
    { name: 'Clave', type: 'string', maxLength: MAX_LENGTH.sensorKey },
    { name: 'Valor', type: 'string', maxLength: MAX_LENGTH.sensorValue },
  ],
} as const satisfies ComplexType;

const ArrayOfVehiculo = { kind: 'array', name: 'ArrayOfVehiculo', item: Vehiculo } as const satisfies ArrayType;
export const ArrayOfPEvento = { kind: 'array', name: 'ArrayOfPEvento', item: pEvento } as const satisfies ArrayType;
export const ArrayOfPSensor = { kind: 'array', name: 'ArrayOfPSensor', item: pSensor } as const satisfies ArrayType;
export const ArrayOfInt = { kind: 'array', name: 'ArrayOfInt', item: 'int' } as const satisfies ArrayType;

/** Result values as handlers return them. Dates are already formatted xs:dateTime text. */
export interface ComandoValue {
  CMD: string;
  UNIDAD: string;
  EQUIPO: string;
  NUMERO: number;
}

export interface VehiculoValue {
  Dominio: string;
  NroSerie: string;
  FechaUltimoReporte: string | null;
  FechaRegistracion: string | null;
}

export const results = {
  boolean: { kind: 'scalar', name: 'boolean', type: 'boolean' },
  int: { kind: 'scalar', name: 'int', type: 'int' },
  Comando: { kind: 'complex', name: 'Comando', type: Comando },
  ArrayOfVehiculo: { kind: 'array', name: 'ArrayOfVehiculo', type: ArrayOfVehiculo },
  ArrayOfInt: { kind: 'array', name: 'ArrayOfInt', type: ArrayOfInt },
} as const;

export interface ResultValues {
  boolean: boolean;
  int: number;
  /** null: no command queued (SOAP omits the Result element, HTTP sends xsi:nil). */
  Comando: ComandoValue | null;
  ArrayOfVehiculo: VehiculoValue[];
  ArrayOfInt: number[];
}
