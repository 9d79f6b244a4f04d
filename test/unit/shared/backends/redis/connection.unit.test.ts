/**
 * The guard every Redis store call runs in: what counts as "Redis unavailable" (answered retry
 * later) and what passes through. A reply of the wrong shape means the connection's replies are out
 * of step with its commands: the guard says so (the stores drop the connection) and fails the call
 * as unavailable.
 */
import { describe, expect, it } from 'vitest';
import { makeGuard, RedisDataError, RedisUnavailableError } from '../../../../../shared/backends/redis/connection.js';

const replyError = (): Error => Object.assign(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'), { name: 'ReplyError' });

describe('makeGuard', () => {
  it('a reply of the wrong shape: outOfStep is told, and the call fails as unavailable naming it', async () => {
    const told: [string, string][] = [];
    const guard = makeGuard('redis://127.0.0.1:6379', (operation, err) => told.push([operation, err.message]));
    const err: unknown = await guard('lockouts.lockedUntil', () => Promise.reject(new RedisDataError('Expected a decimal number, got "requireRegisteredVehicles".'))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RedisUnavailableError);
    expect((err as RedisUnavailableError).cause).toBeInstanceOf(RedisDataError);
    expect((err as Error).message).toMatch(/^Redis at redis:\/\/127\.0\.0\.1:6379 is unavailable \(lockouts\.lockedUntil\): Expected a decimal number/);
    expect(told).toEqual([['lockouts.lockedUntil', 'Expected a decimal number, got "requireRegisteredVehicles".']]);
  });

  it('connection failures become unavailable; replies of Redis and programming errors pass through; outOfStep is not told', async () => {
    let told = 0;
    const guard = makeGuard('redis://r', () => told++);
    await expect(guard('op', () => Promise.reject(new Error('Connection is closed.')))).rejects.toBeInstanceOf(RedisUnavailableError);
    const reply = replyError();
    await expect(guard('op', () => Promise.reject(reply))).rejects.toBe(reply);
    const bug = new TypeError('x is undefined');
    await expect(guard('op', () => Promise.reject(bug))).rejects.toBe(bug);
    expect(await guard('op', () => Promise.resolve(7))).toBe(7);
    expect(told).toBe(0);
  });
});
