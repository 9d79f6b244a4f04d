import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, event, TestApp, xmlParams } from '../helpers/harness.js';

/**
 * Operators and command polls while events are ingested flat out (embedded store, events
 * committed durably on the writer thread). Before the store serialised its writes, about 9% of
 * admin writes and an occasional command operation failed with SQLITE_BUSY; every one of them
 * must now succeed.
 */
const INGEST_MS = 4_000;
const BATCH = 100;

let t: TestApp;

beforeAll(async () => {
  t = await TestApp.start({ SQLITE_SYNCHRONOUS: 'FULL' });
  await t.provider('acme', 'secret-1');
});

afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  await t?.stop();
});

function batchEnvelope(first: number): string {
  let items = '';
  for (let i = 0; i < BATCH; i++) items += `<pEvento>${xmlParams(event({ Codigo: String(first + i) }))}</pEvento>`;
  return `${xmlParams(credentials())}<Eventos>${items}</Eventos>`;
}

describe('the embedded store under full ingest', () => {
  it('answers every admin write and command operation, none failing', async () => {
    const failures: string[] = [];
    const deadline = Date.now() + INGEST_MS;
    let next = 1;
    let ingested = 0;

    const ingestLoop = async (): Promise<void> => {
      while (Date.now() < deadline) {
        const first = next;
        next += BATCH;
        const r = await t.soap11('LoginYInsertarEventos', batchEnvelope(first));
        if (r.status !== 200 || r.text.includes('<int>-')) failures.push(`ingest ${r.status} ${r.text.slice(0, 200)}`);
        else ingested += BATCH;
      }
    };

    let adminCalls = 0;
    const adminLoop = async (): Promise<void> => {
      let i = 0;
      while (Date.now() < deadline) {
        i++;
        const calls = [
          t.admin('PATCH', '/admin/providers/acme', { timeZone: i % 2 === 0 ? 'UTC' : 'America/Argentina/Buenos_Aires' }),
          t.admin('POST', '/admin/providers/acme/commands', { cmd: 'CC', unidad: 'AB123CD', equipo: String(i) }),
          t.admin('PUT', `/admin/providers/acme/trip/vehicles/V${i % 7}`, { nroSerie: `SN-${i}` }),
        ];
        for (const call of calls) {
          adminCalls++;
          try {
            const r = await call;
            if (r.status >= 300) failures.push(`admin ${r.status} ${JSON.stringify(r.json)}`);
          } catch (err) {
            failures.push(`admin dropped: ${String(err)}`);
          }
        }
      }
    };

    let commandCalls = 0;
    const commandLoop = async (): Promise<void> => {
      while (Date.now() < deadline) {
        const got = await t.post('LoginYObtenerComando', credentials());
        commandCalls++;
        if (got.status !== 200) {
          failures.push(`ObtenerComando ${got.status} ${got.text}`);
          continue;
        }
        const numero = /<NUMERO>(\d+)<\/NUMERO>/.exec(got.text)?.[1];
        if (numero === undefined) continue;
        for (const [op, extra] of [
          ['LoginYEstadoComando', { NUMERO: numero, MSG: 'sent' }],
          ['LoginYComandoProcesado', { NUMERO: numero, correcto: 'true' }],
        ] as const) {
          const r = await t.post(op, { ...credentials(), ...extra });
          commandCalls++;
          if (r.status !== 200 || !r.text.includes('>true<')) failures.push(`${op} ${r.status} ${r.text}`);
        }
      }
    };

    await Promise.all([ingestLoop(), ingestLoop(), ingestLoop(), adminLoop(), commandLoop()]);

    console.log(`[store-under-ingest] ${ingested} events, ${adminCalls} admin calls, ${commandCalls} command calls, ${failures.length} failures`);
    expect(failures).toEqual([]);
    // The loops really overlapped with a busy writer.
    expect(ingested).toBeGreaterThan(5 * BATCH);
    expect(adminCalls).toBeGreaterThan(20);
    expect(commandCalls).toBeGreaterThan(20);
  }, 30_000);
});
