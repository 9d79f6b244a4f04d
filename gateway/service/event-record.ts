import { MAX_LENGTH, type DateTimeValue, type EventInput } from '../../shared/catalogue/index.js';
import type { EventInstant, EventRecord } from '../../shared/backends/types.js';
import { resolveInstant, withinDotNetRange } from '../../shared/dotnet/timezone.js';
import { parseDouble } from '../../shared/dotnet/values.js';
import { dedupeKey } from './dedupe-key.js';
import { quoted } from './refusals.js';

/*
 * A client's event as the record the stores keep, or why it is invalid (-3): validation and
 * record building, one event at a time, with no state. What happens to the records (registered
 * vehicles, rate, the event log): ingest.ts.
 */

function tooLong(value: string | null, max: number): boolean {
  return value !== null && value.length > max;
}

/**
 * The instant a received dateTime denotes, or null when there is none or it falls outside .NET's
 * DateTime range once the offset or the provider's zone is applied (0001-01-01T00:00 in a zone
 * east of UTC is still 0000-12-31 in UTC): such an event is invalid (-3), never "retry later".
 */
function instantOf(dt: DateTimeValue | null, zone: string): EventInstant | null {
  if (!dt?.parsed) return null;
  const instant = resolveInstant(dt.parsed, zone);
  return withinDotNetRange(instant) ? instant : null;
}

/** Why a date of an event has no instant (instantOf gave null). */
function dateProblem(name: string, dt: DateTimeValue | null | undefined): string {
  if (dt === null || dt === undefined || dt.text.trim() === '') return `${name} is missing`;
  if (!dt.parsed) return `${name} ${quoted(dt.text)} is not a dateTime (xs:dateTime, e.g. 2026-11-22T08:59:30-03:00)`;
  return `${name} ${quoted(dt.text)} falls outside 0001-01-01..9999-12-31 once its offset or zone is applied`;
}

/** The first number of an event that is not finite, as the reason it is invalid. */
function numberProblem(e: EventInput): string {
  for (const [name, value] of [['Latitud', e.Latitud], ['Longitud', e.Longitud], ['Altitud', e.Altitud], ['Velocidad', e.Velocidad], ['Rumbo', e.Rumbo ?? 0]] as const) {
    if (!Number.isFinite(value)) return `${name} is ${String(value)}, not a finite number`;
  }
  return 'a number is not finite';
}

/** The event as a record, or why it is invalid (-3). */
export function toEventRecord(systemUser: string, e: EventInput, zone: string, operation: string, now: number): EventRecord | string {
  // Declared limits were applied by the call pipeline; a Crudo kept from an undeclared extra
  // field (docs/protocol.md §Reading requests) did not pass through it.
  const dominio = e.Dominio?.trim() ?? '';
  if (dominio === '') return 'Dominio is empty';
  if (tooLong(e.Crudo ?? null, MAX_LENGTH.crudo)) return `Crudo is ${e.Crudo!.length} characters; the limit is ${MAX_LENGTH.crudo}`;
  const rumbo = e.Rumbo ?? null;
  if (!Number.isFinite(e.Latitud) || !Number.isFinite(e.Longitud) || !Number.isFinite(e.Altitud) || !Number.isFinite(e.Velocidad)) return numberProblem(e);
  if (rumbo !== null && !Number.isFinite(rumbo)) return numberProblem(e);
  const eventTime = instantOf(e.FechaHoraEvento, zone);
  if (eventTime === null) return dateProblem('FechaHoraEvento', e.FechaHoraEvento);
  const receptionTime = instantOf(e.FechaHoraRecepcion, zone);
  if (receptionTime === null) return dateProblem('FechaHoraRecepcion', e.FechaHoraRecepcion);
  // Every pSensor as sent, in order; a Clave or Valor that is absent or nil is '' (docs/protocol.md §Events).
  const sent = e.Sensores;
  const sensors = sent === undefined || sent === null ? [] : sent.map((s) => ({ clave: s.Clave ?? '', valor: s.Valor ?? '' }));
  // Out-of-range coordinates are stored, flagged: clients swap lat/lon by mistake (docs/protocol.md §Events).
  const inRange = Math.abs(e.Latitud) <= 90 && Math.abs(e.Longitud) <= 180;
  const valido = e.Valido ?? null;
  const nroSerie = e.NroSerie ?? '';
  const codigo = e.Codigo ?? '';
  return {
    systemUser,
    dominio,
    nroSerie,
    codigo,
    latitud: e.Latitud,
    longitud: e.Longitud,
    altitud: e.Altitud,
    velocidad: e.Velocidad,
    rumbo,
    validPosition: inRange && valido !== false,
    valido,
    eventTimeText: e.FechaHoraEvento!.text,
    eventTime,
    receptionTimeText: e.FechaHoraRecepcion!.text,
    receptionTime,
    receivedAt: now,
    crudo: e.Crudo ?? null,
    sensors,
    operation,
    dedupeKey: dedupeKey(systemUser, dominio, nroSerie, codigo, eventTime.epochMs, eventTime.subMsTicks, e.Latitud, e.Longitud),
  };
}

/** Rumbo and Crudo sent to an operation that does not declare them are kept (docs/protocol.md §Reading requests). */
export function withExtras(input: EventInput, extras: ReadonlyMap<string, string>): EventInput {
  if (extras.size === 0) return input;
  const rumbo = extras.get('Rumbo');
  const crudo = extras.get('Crudo');
  if (rumbo === undefined && crudo === undefined) return input;
  return {
    ...input,
    ...(rumbo !== undefined && input.Rumbo === undefined ? { Rumbo: parseDouble(rumbo) } : {}),
    ...(crudo !== undefined && input.Crudo === undefined ? { Crudo: crudo } : {}),
  };
}
