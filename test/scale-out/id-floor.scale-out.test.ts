/**
 * ID_FLOOR: every event id issued is greater than N, so ids continue above a legacy sequence; raising
 * it later keeps ids increasing, lowering it changes nothing. Embedded (SQLite, through the real
 * server) and scale-out (the shared Redis counter, through real gateways on Redis and Kafka).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { foldId } from '../../gateway/service/ingest.js';
import { ConfigError, loadConfig } from '../../shared/config/index.js';
import { credentials, event, TestApp, xmlParams } from '../helpers/harness.js';
import { services, uniqueName } from '../helpers/services.js';

const idOf = (text: string): number => Number(/Result>(-?\d+)</.exec(text)?.[1] ?? NaN);

/** Inserts one event; returns the answer and the id stored for it (the newest event). */
async function insert(t: TestApp, codigo: string): Promise<{ answer: number; stored: bigint }> {
  const answer = idOf((await t.soap11('LoginYInsertarEvento', xmlParams({ ...credentials(), ...event({ Codigo: codigo }) }))).text);
  const [latest] = await t.app.backends.events.recent({ limit: 1, provider: 'acme' });
  expect(latest?.codigo).toBe(codigo);
  return { answer, stored: latest!.id };
}

describe('ID_FLOOR configuration', () => {
  it('is a whole number that leaves room for ids below 2^63', () => {
    expect(loadConfig({}).ids.floor).toBe(0n);
    expect(loadConfig({ ID_FLOOR: ' 123456789012345678 ' }).ids.floor).toBe(123456789012345678n);
    expect(loadConfig({ ID_FLOOR: '9223372035854775807' }).ids.floor).toBe(2n ** 63n - 1n - 1_000_000_000n);
    for (const bad of ['-1', '1.5', '1e9', 'abc', '0x10', '9223372035854775808', '99999999999999999999']) {
      expect(() => loadConfig({ ID_FLOOR: bad }), bad).toThrow(ConfigError);
    }
    expect(() => loadConfig({ ID_FLOOR: 'abc' })).toThrow('ID_FLOOR must be a whole number, got "abc".');
    expect(() => loadConfig({ ID_FLOOR: '9223372036854775807' })).toThrow('ID_FLOOR must be at most 9223372035854775807 (event ids are 64-bit), got 9223372036854775807.');
  });
});

describe('ID_BLOCK_SIZE and KAFKA_ID_TOPIC configuration', () => {
  it('blocks of 1 to a million ids, 1000 by default; the id topic follows KAFKA_TOPIC unless set', () => {
    expect(loadConfig({}).ids.blockSize).toBe(1000);
    expect(loadConfig({ ID_BLOCK_SIZE: '1' }).ids.blockSize).toBe(1);
    expect(loadConfig({ ID_BLOCK_SIZE: '1000000' }).ids.blockSize).toBe(1_000_000);
    for (const bad of ['0', '-5', '1.5', 'abc', '1000001']) expect(() => loadConfig({ ID_BLOCK_SIZE: bad }), bad).toThrow(ConfigError);
    expect(() => loadConfig({ ID_BLOCK_SIZE: '1000001' })).toThrow('ID_BLOCK_SIZE must be at most 1000000, got 1000001.');
    expect(loadConfig({}).ids.topic).toBe('gateway.events.id-blocks');
    expect(loadConfig({ KAFKA_TOPIC: 'fleet' }).ids.topic).toBe('fleet.id-blocks');
    expect(loadConfig({ KAFKA_TOPIC: 'fleet', KAFKA_ID_TOPIC: 'ids' }).ids.topic).toBe('ids');
  });
});

describe('ID_FLOOR, embedded', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gw-idfloor-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The real server on one DATA_DIR, restarted with each ID_FLOOR. */
  async function withServer<T>(env: Record<string, string>, fn: (t: TestApp) => Promise<T>): Promise<T> {
    const t = await TestApp.start({ DATA_DIR: dir, ...env });
    try {
      return await fn(t);
    } finally {
      await t.stop();
    }
  }

  it('starts above the floor, keeps increasing across restarts, and follows a floor raised later', async () => {
    await withServer({ ID_FLOOR: '1000' }, async (t) => {
      await t.provider('acme', 'secret-1');
      expect(await insert(t, 'a')).toEqual({ answer: 1001, stored: 1001n });
      expect(await insert(t, 'b')).toEqual({ answer: 1002, stored: 1002n });
    });
    // A lower floor (or none) changes nothing: ids continue after the stored ones.
    await withServer({ ID_FLOOR: '10' }, async (t) => expect(await insert(t, 'c')).toEqual({ answer: 1003, stored: 1003n }));
    await withServer({}, async (t) => expect(await insert(t, 'd')).toEqual({ answer: 1004, stored: 1004n }));
    // Raised later, above 2^31: the stored id continues above it; the answer is the folded id.
    await withServer({ ID_FLOOR: '3000000000' }, async (t) => {
      expect(await insert(t, 'e')).toEqual({ answer: Number(((3000000001n - 1n) % 2147483647n) + 1n), stored: 3000000001n });
      expect((await insert(t, 'f')).stored).toBe(3000000002n);
    });
    await withServer({ ID_FLOOR: '1000' }, async (t) => expect((await insert(t, 'g')).stored).toBe(3000000003n));
    // Five server starts in a row: 80 s was seen on a loaded 2-core machine.
  }, 180_000);
});

describe('ID_FLOOR, scale-out (real Redis and Kafka)', () => {
  const s = services();
  const env: Record<string, string> = {
    REDIS_URL: s.redisUrl,
    REDIS_KEY_PREFIX: `${uniqueName('idfloor')}:`,
    KAFKA_BROKERS: s.kafkaBrokers.join(','),
    KAFKA_TOPIC: uniqueName('idfloor'),
    // One thread and blocks of 10 (offset o of the id-blocks topic: floor + 10·o + 1 ... + 10), so
    // the blocks each gateway takes are known.
    GATEWAY_THREADS: '1',
    ID_BLOCK_SIZE: '10',
  };
  const running: TestApp[] = [];
  afterAll(async () => {
    for (const t of running) await t.stop().catch(() => undefined);
  });
  const start = async (floor: string | null): Promise<TestApp> => {
    const t = await TestApp.start({ ...env, ...(floor === null ? {} : { ID_FLOOR: floor }) });
    running.push(t);
    return t;
  };
  const stop = async (t: TestApp): Promise<void> => {
    running.splice(running.indexOf(t), 1);
    await t.stop();
  };
  const answer = async (t: TestApp, codigo: string) =>
    idOf((await t.soap11('LoginYInsertarEvento', xmlParams({ ...credentials(), ...event({ Codigo: codigo }) }))).text);

  it('every gateway issues above the floor; raised later, the others continue above it from their next block', async () => {
    const gw1 = await start('5000000');
    await gw1.provider('acme', 'secret-1');
    expect(await answer(gw1, 'a')).toBe(5_000_001); // gw1's block: offset 0, 5,000,001-5,000,010
    let gw2 = await start('5000000');
    expect(await answer(gw2, 'b')).toBe(5_000_011); // offset 1
    expect(await answer(gw1, 'c')).toBe(5_000_002);

    // gw2 restarts with a higher floor, above 2^31; gw1 keeps running with its block below it.
    await stop(gw2);
    gw2 = await start('7000000000');
    expect(await answer(gw2, 'd')).toBe(foldId(7_000_000_021n)); // offset 2, under the new floor
    expect(await answer(gw1, 'e')).toBe(5_000_003); // its block in hand, taken under 5,000,000
    // gw1's next block (taken when half of this one is used) reads gw2's record and adopts the floor.
    const seen: number[] = [];
    for (let i = 0; i < 12 && (seen.at(-1) ?? 0) <= 5_000_010; i++) seen.push(await answer(gw1, `f${i}`));
    expect(seen.slice(0, -1).every((id) => id > 5_000_003 && id <= 5_000_010)).toBe(true);
    expect(seen.at(-1)).toBe(foldId(7_000_000_041n)); // offset 3 was its record under the old floor, dropped

    // Lowered (or unset) again: the topic's floor stays, ids keep increasing.
    await stop(gw2);
    gw2 = await start('1000');
    expect(await answer(gw2, 'g')).toBe(foldId(7_000_000_051n));
    await stop(gw2);
    gw2 = await start(null);
    expect(await answer(gw2, 'h')).toBe(foldId(7_000_000_061n));
  }, 90_000);
});
