import type { EventFieldName } from './schema.js';

/**
 * What each field of the event record holds when the provider did not send it: the one text that
 * events.proto's comment on the field and the field's row in docs/events.md §The schema both carry
 * word for word (test/unit/docs/events.unit.test.ts), and that the gateway does
 * (test/embedded/event-presence.embedded.test.ts, one case or more per field). A field that may be
 * null says when it is absent, and only such a field says "absent" (the test holds that to
 * EVENT_FIELDS' `nullable`). A Record over every field name: a new field does not compile
 * without its text.
 */
export const EVENT_PRESENCE: { readonly [N in EventFieldName]: string } = {
  systemUser: 'Always set.',
  dominio: 'Never empty: an event without a Dominio is refused (-3).',
  nroSerie: 'Empty when not sent.',
  codigo: 'Empty when not sent.',
  latitud: "0 when left out or nil over SOAP (XmlSerializer's default); over HTTP GET and POST a missing one is refused (Missing parameter).",
  longitud: "0 when left out or nil over SOAP (XmlSerializer's default); over HTTP GET and POST a missing one is refused (Missing parameter).",
  altitud: "0 when left out or nil over SOAP (XmlSerializer's default); over HTTP GET and POST a missing one is refused (Missing parameter).",
  velocidad: "0 when left out or nil over SOAP (XmlSerializer's default); over HTTP GET and POST a missing one is refused (Missing parameter).",
  rumbo:
    "Absent when the operation has no Rumbo parameter and none was sent (LoginYInsertarEvento and LoginYInsertarEvento2 keep one sent anyway; a pEvento's is not kept). " +
    "InsertarEvento over SOAP without Rumbo, or with it nil, carries 0 (XmlSerializer's default).",
  validPosition: 'Always set.',
  valido: "Absent for the operations other than LoginYInsertarEvento2, which carries false when Valido is left out (XmlSerializer's default).",
  eventTimeText: 'Always set: an event without FechaHoraEvento is refused (-3).',
  eventTime: 'Always set: an event without FechaHoraEvento is refused (-3).',
  receptionTimeText: 'Set in every event a gateway accepts: an event without FechaHoraRecepcion, or with it nil, is refused (-3). Absent only in a record another writer added.',
  receptionTime: 'Set in every event a gateway accepts: an event without FechaHoraRecepcion, or with it nil, is refused (-3). Absent only in a record another writer added.',
  receivedAt: 'Always set.',
  crudo:
    "Absent when the operation has no Crudo parameter and none was sent (LoginYInsertarEvento and LoginYInsertarEvento2 keep one sent anyway; a pEvento's is not kept), " +
    'or when InsertarEvento over SOAP left it out or nil. InsertarEvento over HTTP GET or POST without Crudo carries "" (a missing form field is empty).',
  sensors: 'Empty for the operations other than LoginYInsertarEvento2 and when Sensores is not sent; otherwise every pSensor as sent, in order (none left out; a key may repeat).',
  operation: 'Always set.',
  dedupeKey: 'Always set.',
};

/** The same for the two fields of a sensor reading (message Sensor). */
export const SENSOR_PRESENCE: { readonly clave: string; readonly valor: string } = {
  clave: "\"\" when the pSensor's Clave was empty, left out or nil.",
  valor: "\"\" when the pSensor's Valor was empty, left out or nil.",
};
