import { MAX_LENGTH, MAX_SENSORS } from '../catalogue/complex-types.js';
import type { ShippedFieldSpec } from './field-spec.js';

/**
 * The one declaration of the event record: the fields in order (the order of the Kafka message's
 * keys and of a new store's columns). Every representation is derived from it (schema.ts), the
 * migrations of a field added later from its `since` (migrations.ts), and the public schema and
 * the docs' field tables are generated from it (`npm run generate`). What an entry may say:
 * field-spec.ts. Adding a field: docs/architecture.md §Adding an event field.
 */
export const EVENT_FIELDS = {
  systemUser: {
    kind: 'text', nullable: false, column: 'system_user', lowCardinality: true, maxLength: MAX_LENGTH.systemUser, example: 'acme', proto: 2,
    doc: "The provider that sent the event (its SystemUser). With `dominio`, the record's key.",
    absent: 'Always set.',
  },
  dominio: {
    kind: 'text', nullable: false, column: 'dominio', maxLength: MAX_LENGTH.dominio, example: 'AB123CD', proto: 3,
    doc: 'The vehicle (Dominio, usually a number plate), as sent with surrounding spaces trimmed.',
    absent: 'Never empty: an event without a Dominio is refused (-3).',
  },
  nroSerie: {
    kind: 'text', nullable: false, column: 'nro_serie', maxLength: MAX_LENGTH.nroSerie, example: 'SN-1', proto: 4,
    doc: "NroSerie: the tracking device's serial number, as sent.",
    absent: 'Empty when not sent.',
  },
  codigo: {
    kind: 'text', nullable: false, column: 'codigo', lowCardinality: true, maxLength: MAX_LENGTH.codigo, example: '1', proto: 5,
    doc: "Codigo: the provider's event code, as sent.",
    absent: 'Empty when not sent.',
  },
  latitud: {
    kind: 'real', nullable: false, column: 'latitud', example: -34.6, proto: 6,
    doc: 'Latitude, decimal degrees, as sent. Not checked: see valid_position.',
    absent: "0 when left out or nil over SOAP (XmlSerializer's default); over HTTP GET and POST a missing one is refused (Missing parameter).",
  },
  longitud: {
    kind: 'real', nullable: false, column: 'longitud', example: -58.4, proto: 7,
    doc: 'Longitude, decimal degrees, as sent. Not checked: see valid_position.',
    absent: "0 when left out or nil over SOAP (XmlSerializer's default); over HTTP GET and POST a missing one is refused (Missing parameter).",
  },
  altitud: {
    kind: 'real', nullable: false, column: 'altitud', example: 25, proto: 8,
    doc: "Altitude, as sent (the provider's unit; the protocol fixes none).",
    absent: "0 when left out or nil over SOAP (XmlSerializer's default); over HTTP GET and POST a missing one is refused (Missing parameter).",
  },
  velocidad: {
    kind: 'real', nullable: false, column: 'velocidad', example: 60.5, proto: 9,
    doc: "Speed, as sent (the provider's unit; the protocol fixes none).",
    absent: "0 when left out or nil over SOAP (XmlSerializer's default); over HTTP GET and POST a missing one is refused (Missing parameter).",
  },
  rumbo: {
    kind: 'real', nullable: true, column: 'rumbo', example: 90, proto: 10,
    doc: "Heading, as sent (the provider's unit).",
    absent:
      "Absent when the operation has no Rumbo parameter and none was sent (LoginYInsertarEvento and LoginYInsertarEvento2 keep one sent anyway; a pEvento's is not kept). " +
      "InsertarEvento over SOAP without Rumbo, or with it nil, carries 0 (XmlSerializer's default).",
  },
  validPosition: {
    kind: 'bool', nullable: false, column: 'valid_position', example: true, proto: 11,
    doc: 'False when the coordinates are out of range (|latitud| > 90 or |longitud| > 180; the event is kept, flagged) or the device said so (valido = false).',
    absent: 'Always set.',
  },
  valido: {
    kind: 'bool', nullable: true, column: 'valido', example: null, proto: 12,
    doc: 'Valido as sent with LoginYInsertarEvento2.',
    absent: "Absent for the operations other than LoginYInsertarEvento2, which carries false when Valido is left out (XmlSerializer's default).",
  },
  eventTimeText: {
    kind: 'text', nullable: false, column: 'event_time_text', example: '2024-05-01T09:00:00', proto: 13,
    doc: 'FechaHoraEvento exactly as sent (xs:dateTime text, with or without a UTC offset).',
    absent: 'Always set: an event without FechaHoraEvento is refused (-3).',
  },
  eventTime: {
    kind: 'instant', nullable: false, column: 'event_time', example: { epochMs: 1_714_554_000_000, subMsTicks: 0 }, proto: 14,
    doc:
      "FechaHoraEvento resolved to an instant. A time sent without an offset is read in the provider's configured time zone, " +
      'as .NET reads local time (docs/protocol.md §Local times and clock changes).',
    absent: 'Always set: an event without FechaHoraEvento is refused (-3).',
  },
  receptionTimeText: {
    kind: 'text', nullable: true, column: 'reception_time_text', example: null, proto: 15,
    doc: 'FechaHoraRecepcion exactly as sent.',
    absent: 'Set in every event a gateway accepts: an event without FechaHoraRecepcion, or with it nil, is refused (-3). Absent only in a record another writer added.',
  },
  receptionTime: {
    kind: 'instant', nullable: true, column: 'reception_time', example: null, proto: 16,
    doc: 'FechaHoraRecepcion resolved as the event time is.',
    absent: 'Set in every event a gateway accepts: an event without FechaHoraRecepcion, or with it nil, is refused (-3). Absent only in a record another writer added.',
  },
  receivedAt: {
    kind: 'epochMs', nullable: false, column: 'received_at', example: 1_714_554_001_000, proto: 17,
    doc: "When the gateway received the request, by the gateway's clock.",
    absent: 'Always set.',
  },
  crudo: {
    kind: 'text', nullable: true, column: 'crudo', maxLength: MAX_LENGTH.crudo, example: null, proto: 18,
    doc: "Crudo (the device's raw message) as sent.",
    absent:
      "Absent when the operation has no Crudo parameter and none was sent (LoginYInsertarEvento and LoginYInsertarEvento2 keep one sent anyway; a pEvento's is not kept), " +
      'or when InsertarEvento over SOAP left it out or nil. InsertarEvento over HTTP GET or POST without Crudo carries "" (a missing form field is empty).',
  },
  sensors: {
    kind: 'pairs', nullable: false, column: 'sensors', clickhouseColumn: 'sensor', maxItems: MAX_SENSORS, example: [], proto: 19,
    doc: 'Sensores (LoginYInsertarEvento2): each reading a key (Clave) and its value (Valor).',
    absent: 'Empty for the operations other than LoginYInsertarEvento2 and when Sensores is not sent; otherwise every pSensor as sent, in order (none left out; a key may repeat).',
  },
  operation: {
    kind: 'text', nullable: false, column: 'operation', lowCardinality: true, example: 'LoginYInsertarEvento', proto: 20,
    doc: 'The SOAP operation that carried the event, e.g. "LoginYInsertarEvento".',
    absent: 'Always set.',
  },
  dedupeKey: {
    kind: 'text', nullable: false, column: 'dedupe_key', hidden: true, hash64: true, example: 'example-dedupe-key', proto: 21,
    doc:
      "The gateway's identity of a resent event (a hash over provider, Dominio, NroSerie, Codigo, event time and position): " +
      'equal for the copies of one event; compare it, do not parse it.',
    absent: 'Always set.',
  },
} as const satisfies Record<string, ShippedFieldSpec>;
