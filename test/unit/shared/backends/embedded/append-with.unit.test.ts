/**
 * The embedded event log's `appendWith` (a completion instead of a promise, EventIngest's path)
 * against its `append`, the reference: two logs given the same calls in the same turns answer the
 * same outcomes — new events, resends of a copy still pending and of one committed, batches, an
 * event no store can hold, a commit that fails, a closed log — and store the same rows.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { DATABASE_FILE } from '../../../../../shared/backends/embedded/database.js';
import { openEmbeddedBackends, type EmbeddedBackends } from '../../../../../shared/backends/embedded/index.js';
import type { AppendOutcome, EventRecord } from '../../../../../shared/backends/types.js';
import { eventRecords } from '../../../../helpers/event-records.js';

const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function openLog(): Promise<{ b: EmbeddedBackends; dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'append-with-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const b = await openEmbeddedBackends({ dataDir: dir, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 600_000, now: () => T0, onCommitError: () => {} });
  cleanups.push(() => b.close());
  return { b, dir };
}

type Answer = { outcomes: AppendOutcome[] } | { refused: string };

/** One call through `appendWith`, as a promise of what its completion was told (and when). */
function viaCompletion(b: EmbeddedBackends, events: EventRecord[]): Promise<Answer> {
  return new Promise((resolve) =>
    b.eventLog.appendWith(events, {
      appended: (outcomes) => resolve({ outcomes }),
      refused: (error) => resolve({ refused: String(error) }),
    }),
  );
}

function viaPromise(b: EmbeddedBackends, events: EventRecord[]): Promise<Answer> {
  return b.eventLog.append(events).then(
    (outcomes) => ({ outcomes }),
    (error: unknown) => ({ refused: String(error) }),
  );
}

function rows(dir: string): unknown[] {
  const db = new Database(path.join(dir, DATABASE_FILE), { readonly: true });
  try {
    return db.prepare('SELECT id, dedupe_key, dominio FROM events ORDER BY id').raw().all();
  } finally {
    db.close();
  }
}

/** The same script of calls on one log, each call made through `call`. */
async function script(call: (b: EmbeddedBackends, events: EventRecord[]) => Promise<Answer>): Promise<{ answers: Answer[]; stored: unknown[] }> {
  const { b, dir } = await openLog();
  const event = eventRecords({ eventTimeBase: T0 - 3_600_000, stepMs: 1, receivedAt: T0, dedupePrefix: 'key-' });
  const answers: Answer[] = [];
  const e1 = event();
  const e2 = event();
  // One turn: a new event, its resend (pending), a batch holding another resend, a lone event.
  answers.push(...(await Promise.all([call(b, [e1]), call(b, [{ ...e1, receivedAt: T0 + 1 }]), call(b, [event(), { ...e1, receivedAt: T0 + 2 }]), call(b, [e2])])));
  // Resends of committed copies, alone and in a batch; an event no store can hold, alone and in a batch.
  answers.push(await call(b, [{ ...e2, receivedAt: T0 + 3 }]));
  answers.push(await call(b, [{ ...e1, receivedAt: T0 + 4 }, event()]));
  answers.push(await call(b, [event({ latitud: Number.NaN })]));
  answers.push(await call(b, [event(), event({ longitud: Number.POSITIVE_INFINITY })]));
  // A commit that fails: a new event and its resend in the same turn share its fate.
  const side = new Database(path.join(dir, DATABASE_FILE));
  side.pragma('busy_timeout = 5000');
  side.exec(`CREATE TRIGGER refuse_events BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'simulated I/O failure'); END`);
  const e3 = event();
  answers.push(...(await Promise.all([call(b, [e3]), call(b, [{ ...e3, receivedAt: T0 + 5 }])])));
  side.exec('DROP TRIGGER refuse_events');
  side.close();
  // Stored anew (never acknowledged before), then the log closes and answers unavailable.
  answers.push(await call(b, [{ ...e3, receivedAt: T0 + 6 }]));
  await b.close();
  answers.push(await call(b, [event()]));
  return { answers, stored: rows(dir) };
}

describe('SqliteEventLog.appendWith', () => {
  it('answers and stores what append does, call for call', async () => {
    const expected = await script(viaPromise);
    const got = await script(viaCompletion);
    // The script covers what it says: ids, duplicates, refusals and unavailability all occur.
    const flat = expected.answers.flatMap((a) => ('outcomes' in a ? a.outcomes : []));
    expect(flat.some((o) => o.ok && o.duplicate)).toBe(true);
    expect(flat.some((o) => !o.ok)).toBe(true);
    expect(expected.answers.filter((a) => 'refused' in a)).toHaveLength(2);
    expect(expected.stored.length).toBeGreaterThan(4);
    expect(got.answers).toEqual(expected.answers);
    expect(got.stored).toEqual(expected.stored);
  });
});
