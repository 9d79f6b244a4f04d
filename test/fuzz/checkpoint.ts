/**
 * What the fuzzer does besides mutated requests: the canary (after every 1,000 cases a valid
 * LoginYInsertarEvento must succeed and its event be stored), fresh sessions for the
 * session-bound seeds, and operator data (commands, trip vehicles, some of them hostile) so
 * ObtenerComando and ConsultarVehiculosEnViaje answer with content rather than empty.
 */
import { header, Connection, type Answer } from './client.js';
import { cloneDraft, FUZZ_PASSWORD, FUZZ_USER, serialize, type Binding, type LiveContext } from './corpus.js';
import { corpus } from './mutator.js';
import { CANARY_PASSWORD, CANARY_USER, type FuzzTarget } from './target.js';

const CANARY_BINDINGS: readonly Binding[] = ['soap11', 'soap12', 'get', 'post'];

/** The canary's request: the corpus seed of LoginYInsertarEvento with the canary's credentials and a unique Codigo. */
export function canaryRequest(k: number, ctx: LiveContext, user = CANARY_USER, password = CANARY_PASSWORD): { bytes: Buffer; binding: Binding; codigo: string } {
  const binding = CANARY_BINDINGS[k % CANARY_BINDINGS.length]!;
  const seed = corpus().find((d) => d.seed === `${binding}:LoginYInsertarEvento`);
  if (seed === undefined) throw new Error(`no ${binding} seed for LoginYInsertarEvento`);
  const d = cloneDraft(seed);
  const codigo = `canary-${k}`;
  const values: Record<string, string> = { SystemUser: user, Password: password, Codigo: codigo };
  if (d.soap !== null) for (const p of d.soap.params) if (p.name in values) p.text = values[p.name]!;
  if (d.form !== null) for (const f of d.form) if (f[0] in values) f[1] = encodeURIComponent(values[f[0]]!);
  return { bytes: serialize(d, ctx), binding, codigo };
}

function resultOf(a: Answer): number | null {
  const m = /<LoginYInsertarEventoResult>(-?\d+)<|<int xmlns="[^"]*">(-?\d+)<\/int>/.exec(a.body.toString('utf8'));
  return m ? Number(m[1] ?? m[2]) : null;
}

/** The int an id is answered as: ((id - 1) mod 2147483647) + 1. */
function folded(id: string): number {
  return Number(((BigInt(id) - 1n) % 2147483647n) + 1n);
}

export interface CanaryResult {
  ok: boolean;
  detail: string;
  request: Buffer;
}

export async function canary(target: FuzzTarget, k: number, ctx: LiveContext, timeoutMs: number): Promise<CanaryResult> {
  const { bytes, binding, codigo } = canaryRequest(k, ctx);
  const a = await Connection.once(target.port, bytes, { head: false, timeoutMs, graceMs: 0 });
  const result = a.outcome === 'answered' && a.status === 200 ? resultOf(a) : null;
  if (result === null || result <= 0) {
    return { ok: false, request: bytes, detail: `${binding} canary ${k}: ${a.outcome} ${a.status} ${a.body.toString('utf8', 0, 300)}` };
  }
  const stored = await target.admin('GET', `/admin/events?provider=${CANARY_USER}&limit=20`);
  const events = (stored.json as { events?: { id: string; codigo: string }[] } | null)?.events ?? [];
  const mine = events.find((e) => e.codigo === codigo);
  if (mine === undefined || folded(mine.id) !== result) {
    return { ok: false, request: bytes, detail: `${binding} canary ${k}: answered ${result} but the store has ${mine ? `id ${mine.id}` : 'no such event'}` };
  }
  return { ok: true, request: bytes, detail: '' };
}

/** A fresh ASMX session for the fuzzed provider. */
export async function login(port: number, timeoutMs: number): Promise<string> {
  const body = `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><Login xmlns="http://tempuri.org/"><SystemUser>${FUZZ_USER}</SystemUser><Password>${FUZZ_PASSWORD}</Password></Login></soap:Body></soap:Envelope>`;
  const bytes = Buffer.from(
    `POST /service.asmx HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: text/xml; charset=utf-8\r\nSOAPAction: "http://tempuri.org/Login"\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  const a = await Connection.once(port, bytes, { head: false, timeoutMs, graceMs: 0 });
  const id = /ASP\.NET_SessionId=([a-z0-5]{24})/.exec(header(a, 'set-cookie') ?? '')?.[1];
  if (id === undefined) throw new Error(`Login gave no session: ${a.outcome} ${a.status} ${a.body.toString('utf8', 0, 300)}`);
  return id;
}

const HOSTILE_COMMAND = { cmd: 'CC\u0001\u001b[0m\u0000', unidad: 'AB\ud800', equipo: '\ufffe<&>\u0085' };
const NORMAL_COMMAND = { cmd: 'CC', unidad: 'AB123CD', equipo: '42' };

/** Queues one command for the fuzzed provider, ordinary or with characters XML cannot carry. */
export async function queueCommand(target: FuzzTarget, hostile: boolean): Promise<void> {
  await target.admin('POST', `/admin/providers/${FUZZ_USER}/commands`, hostile ? HOSTILE_COMMAND : NORMAL_COMMAND);
}

/** Vehicles on the fuzzed provider's trip, one of them with control characters in its names. */
export async function registerVehicles(target: FuzzTarget): Promise<void> {
  await target.admin('PUT', `/admin/providers/${FUZZ_USER}/trip/vehicles/AB123CD`, { nroSerie: 'SN-1' });
  await target.admin('PUT', `/admin/providers/${FUZZ_USER}/trip/vehicles/${encodeURIComponent('ZZ\u0002Ñ')}`, { nroSerie: 'SN\u0003\ufffe' });
}
