/**
 * OperationService.start, the callback form bindings use (and `invoke`, its promise form): an
 * answer goes to `done`, a backend that cannot be reached becomes the operation's "retry later"
 * (-5 per event, else the unavailable Server fault), and any other error goes to `failed`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findOperation, type ArgumentBag, type OperationDef } from '../../../../shared/catalogue/index.js';
import { BackendUnavailableError, type EventLog, type ProviderStore } from '../../../../shared/backends/types.js';
import { openEmbeddedBackends, type EmbeddedBackends } from '../../../../shared/backends/embedded/index.js';
import { loadConfig } from '../../../../shared/config/index.js';
import { hashPassword } from '../../../../shared/domain/passwords.js';
import { parseXmlDateTime } from '../../../../shared/dotnet/xml-convert.js';
import { ClientError } from '../../../../gateway/errors/registry.js';
import type { CallContext } from '../../../../gateway/service/context.js';
import { OperationService } from '../../../../gateway/service/service.js';

const NOW = Date.UTC(2026, 10, 25, 12, 0, 0);
const opened: { dir: string; backends: EmbeddedBackends }[] = [];

afterEach(async () => {
  for (const { dir, backends } of opened.splice(0)) {
    await backends.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

async function service(overrides: { providers?: (real: ProviderStore) => ProviderStore; eventLog?: EventLog } = {}): Promise<OperationService> {
  const dir = mkdtempSync(path.join(tmpdir(), 'op-service-'));
  const backends = await openEmbeddedBackends({ dataDir: dir, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 60_000, now: () => NOW });
  opened.push({ dir, backends });
  await backends.providers.create({
    systemUser: 'fleet', passwordHash: await hashPassword('secret'), enabled: true, timeZone: null,
    requireRegisteredVehicles: false, createdAt: NOW, updatedAt: NOW,
  });
  const providers = overrides.providers?.(backends.providers) ?? backends.providers;
  return new OperationService({ ...pick(backends), providers, eventLog: overrides.eventLog ?? backends.eventLog }, loadConfig({}));
}

function pick(b: EmbeddedBackends) {
  return { lockouts: b.lockouts, sessions: b.sessions, commands: b.commands, trips: b.trips };
}

function ctx(): CallContext {
  return { operation: '', now: NOW, deadline: Infinity, sessionId: null, extras: new Map(), clientAddress: () => '127.0.0.1', newSessionId: null, provider: null };
}

function op(name: string): OperationDef {
  const found = findOperation(name);
  if (found === undefined) throw new Error(name);
  return found;
}

const at = (text: string) => ({ text, parsed: parseXmlDateTime(text, () => ({ year: 2026, month: 11, day: 25 }), { spaceForT: true }) });
const INSERT: ArgumentBag = {
  SystemUser: 'fleet', Password: 'secret', Dominio: 'AB123CD', NroSerie: '1', Codigo: '1',
  Latitud: -34.6, Longitud: -58.4, Altitud: 10, Velocidad: 50,
  FechaHoraEvento: at('2026-11-25T08:00:00'), FechaHoraRecepcion: at('2026-11-25T08:00:01'),
};

/** Runs `start` and reports which callback it called, with what. */
function started(s: OperationService, name: string, args: ArgumentBag): Promise<{ done: unknown } | { failed: unknown }> {
  return new Promise((resolve) => s.start(op(name), args, ctx(), (r) => resolve({ done: r }), (e) => resolve({ failed: e })));
}

const unreachable = (real: ProviderStore): ProviderStore => ({
  create: (p) => real.create(p),
  get: () => Promise.reject(new BackendUnavailableError('providers down')),
  update: (u, p, n) => real.update(u, p, n),
  list: () => real.list(),
  delete: (u) => real.delete(u),
});

describe('OperationService.start', () => {
  it('hands a stored event its id through done', async () => {
    const outcome = await started(await service(), 'LoginYInsertarEvento', INSERT);
    expect('done' in outcome && typeof outcome.done === 'number' && outcome.done > 0).toBe(true);
  });

  it('answers -5 through done when the provider store cannot be reached', async () => {
    const s = await service({ providers: unreachable });
    expect(await started(s, 'LoginYInsertarEvento', INSERT)).toEqual({ done: -5 });
    expect(await s.invoke(op('LoginYInsertarEvento'), INSERT, ctx())).toBe(-5);
  });

  it('gives an operation without a code its unavailable Server fault through failed', async () => {
    const s = await service({ providers: unreachable });
    const outcome = await started(s, 'Login', { SystemUser: 'fleet', Password: 'secret' });
    expect('failed' in outcome && outcome.failed instanceof ClientError && outcome.failed.key).toBe('unavailable');
    await expect(s.invoke(op('Login'), { SystemUser: 'fleet', Password: 'secret' }, ctx())).rejects.toBeInstanceOf(ClientError);
  });

  it('passes any other error to failed, unchanged', async () => {
    const broken = new Error('a bug of ours');
    const s = await service({ eventLog: { append: () => { throw broken; }, close: () => Promise.resolve() } });
    expect(await started(s, 'LoginYInsertarEvento', INSERT)).toEqual({ failed: broken });
    await expect(s.invoke(op('LoginYInsertarEvento'), INSERT, ctx())).rejects.toBe(broken);
  });
});
