import { describe, expect, it } from 'vitest';
import { RefusalLog, type RefusedCall } from '../../../../gateway/service/refusals.js';
import { createLogger } from '../../../../shared/runtime/logger.js';

const call = (now: number, operation = 'LoginYInsertarEvento'): RefusedCall => ({ operation, now, clientAddress: () => '10.0.0.1' });

describe('RefusalLog', () => {
  it('keeps the last few of each SystemUser, newest first, and forgets the least recently refused SystemUser past its bound', () => {
    const log = new RefusalLog({ perSystemUser: 3, systemUsers: 2 });
    for (let i = 0; i < 5; i++) log.record('acme', call(1000 + i), -3, `reason ${i}`);
    expect(log.recent('acme').map((r) => r.reason)).toEqual(['reason 4', 'reason 3', 'reason 2']);
    log.record('tokyo', call(2000), -1, 'wrong password');
    log.record('acme', call(2001), -3, 'reason 5');
    log.record('lima', call(2002), false, 'no provider has this SystemUser');
    // tokyo was refused least recently: dropped for lima.
    expect(log.recent('tokyo')).toEqual([]);
    expect(log.recent().map((r) => r.systemUser)).toEqual(['lima', 'acme', 'acme', 'acme']);
    expect(log.size).toBe(4);
    expect(log.recent(undefined, 2)).toHaveLength(2);
  });

  it('keeps what a client sent bounded: an over-long SystemUser and a long reason are cut', () => {
    const log = new RefusalLog();
    log.record('x'.repeat(100_000), call(1), -1, `Password ${'y'.repeat(10_000)}`);
    const [kept] = log.recent();
    expect(kept!.systemUser).toBe(`${'x'.repeat(64)}…`);
    expect(kept!.reason.length).toBe(301);
  });

  it('orders refusals of one millisecond as they came', () => {
    const log = new RefusalLog();
    log.record('a', call(5), -3, 'first');
    log.record('b', call(5), -3, 'second');
    log.record(null, call(5), 'Client fault', 'third');
    expect(log.recent().map((r) => r.reason)).toEqual(['third', 'second', 'first']);
    expect(log.recent(null)).toMatchObject([{ systemUser: null, answer: 'Client fault', address: '10.0.0.1', at: new Date(5).toISOString() }]);
  });

  it('logs a SystemUser once per interval, then says how many came meanwhile', () => {
    const lines: string[] = [];
    const logger = createLogger('info', 'gateway', { destination: { write: (line: string) => void lines.push(line) } });
    const log = new RefusalLog({ logger, logEveryMs: 60_000 });
    for (let i = 0; i < 50; i++) log.record('acme', call(1000 + i), -3, 'Dominio is empty');
    log.record('tokyo', call(1100), -1, 'wrong password');
    expect(lines).toHaveLength(2);
    log.record('acme', call(61_000), -3, 'Dominio is empty');
    expect(lines).toHaveLength(3);
    const last = JSON.parse(lines[2]!) as Record<string, unknown>;
    expect(last).toMatchObject({ systemUser: 'acme', answer: '-3', reason: 'Dominio is empty', refusedMeanwhile: 49 });
    expect(last.msg).toBe('refused LoginYInsertarEvento of acme: -3, Dominio is empty (and 49 more since the last line)');
  });

  it('writes a bounded number of lines for all SystemUsers together, then says how many it left out', () => {
    const lines: string[] = [];
    const logger = createLogger('info', 'gateway', { destination: { write: (line: string) => void lines.push(line) } });
    const log = new RefusalLog({ logger, logEveryMs: 60_000, linesPerInterval: 5 });
    for (let i = 0; i < 100; i++) log.record(`made-up-${i}`, call(1000 + i), false, 'no provider has this SystemUser');
    expect(lines).toHaveLength(5);
    log.record('acme', call(70_000), -3, 'Dominio is empty');
    expect(lines).toHaveLength(7);
    expect(JSON.parse(lines[5]!)).toMatchObject({ refusedUnlogged: 95 });
    expect(JSON.parse(lines[6]!)).toMatchObject({ systemUser: 'acme' });
    expect(log.recent(undefined, 1000)).toHaveLength(101);
  });
});
