/**
 * The sample event a client sends (a pEvento's elements, as text): the one copy the test server's
 * requests (harness.ts), the wire fixtures' requests and the fuzzer's corpus start from.
 */
export const SAMPLE_EVENT: Readonly<Record<string, string>> = {
  Dominio: 'AB123CD',
  NroSerie: 'SN-1',
  Codigo: '1',
  Latitud: '-34.6037221',
  Longitud: '-58.3815704',
  Altitud: '25',
  Velocidad: '42.5',
  FechaHoraEvento: '2026-11-22T08:59:30-03:00',
  FechaHoraRecepcion: '2026-11-22T09:00:00-03:00',
};

/** A valid event for LoginYInsertarEvento-style operations. */
export function event(overrides: Record<string, string> = {}): Record<string, string> {
  return { ...SAMPLE_EVENT, ...overrides };
}

/** event() as a generated client (node-soap, zeep) passes it: the numbers as numbers. */
export function clientEvent(codigo: string): Record<string, string | number> {
  const e = event({ Codigo: codigo });
  return { ...e, Latitud: Number(e.Latitud), Longitud: Number(e.Longitud), Altitud: Number(e.Altitud), Velocidad: Number(e.Velocidad) };
}
