/**
 * The guard every Redis store call runs in: what counts as "Redis unavailable" (answered retry
 * later) and what passes through. A reply of the wrong shape is data this module did not write, and
 * fails the call as it is (the reply desync once taken for it was the fault proxy's: docs/operations.md §Stalls).
 */
import { describe, expect, it } from 'vitest';
import { makeGuard, RedisDataError, RedisUnavailableError } from '../../../../../shared/backends/redis/connection.js';
import { deadlineIn } from '../../../../../shared/util/deadline.js';

const replyError = (): Error => Object.assign(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'), { name: 'ReplyError' });

describe('makeGuard', () => {
  it('connection failures become unavailable; replies of Redis, data of the wrong shape and programming errors pass through', async () => {
    const guard = makeGuard('redis://r');
    await expect(guard('op', () => Promise.reject(new Error('Connection is closed.')))).rejects.toBeInstanceOf(RedisUnavailableError);
    const reply = replyError();
    await expect(guard('op', () => Promise.reject(reply))).rejects.toBe(reply);
    const data = new RedisDataError('Expected a decimal number for lockout, got 18 characters of something else.');
    await expect(guard('lockouts.lockedUntil', () => Promise.reject(data))).rejects.toBe(data);
    const bug = new TypeError('x is undefined');
    await expect(guard('op', () => Promise.reject(bug))).rejects.toBe(bug);
    expect(await guard('op', () => Promise.resolve(7))).toBe(7);
  });
});

describe('makeGuard with a request deadline', () => {
  it('fails as unavailable when the deadline passes first, whatever the call is still waiting for', async () => {
    const guard = makeGuard('redis://r');
    const started = Date.now();
    const err: unknown = await guard('sessions.touch', () => new Promise(() => {}), deadlineIn(60)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RedisUnavailableError);
    expect((err as Error).message).toMatch(/\(sessions\.touch\): the request's deadline passed/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('does not start a call once the deadline has passed', async () => {
    const guard = makeGuard('redis://r');
    let started = false;
    const err: unknown = await guard('providers.get', () => {
      started = true;
      return Promise.resolve(1);
    }, deadlineIn(-1)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RedisUnavailableError);
    expect((err as Error).message).toMatch(/no time left before the request's deadline/);
    expect(started).toBe(false);
  });

  it('answers in time as without a deadline', async () => {
    const guard = makeGuard('redis://r');
    expect(await guard('op', () => Promise.resolve('ok'), deadlineIn(1000))).toBe('ok');
  });

  it("redirections and a node that cannot take writes now are unavailable (retry later); other replies of Redis pass through", async () => {
    const guard = makeGuard('redis://r');
    for (const message of ['MOVED 3999 127.0.0.1:6381', 'ASK 3999 127.0.0.1:6381', 'TRYAGAIN Multiple keys request during rehashing of slot', 'CLUSTERDOWN The cluster is down', "READONLY You can't write against a read only replica.", 'LOADING Redis is loading the dataset in memory']) {
      const reply = Object.assign(new Error(message), { name: 'ReplyError' });
      await expect(guard('op', () => Promise.reject(reply)), message).rejects.toBeInstanceOf(RedisUnavailableError);
    }
    const crossSlot = Object.assign(new Error("CROSSSLOT Keys in request don't hash to the same slot"), { name: 'ReplyError' });
    await expect(guard('op', () => Promise.reject(crossSlot))).rejects.toBe(crossSlot);
  });
});
