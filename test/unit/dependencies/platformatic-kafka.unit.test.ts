/**
 * What the worker relies on from @platformatic/kafka: a broker missing from the cluster metadata (a
 * group coordinator or a leader the controller fenced while it was stalled) reaches the client as
 * a retriable error. In 1.x the pool read `broker.host` of undefined and the TypeError ended the
 * worker (a fresh-clone CI run, 2026-11-28: the worker died mid-stall and 1,358 acknowledged events
 * waited for a restart that never came); the project carried a patch for it until 2.x, which has
 * the fix. This test keeps an upgrade from bringing the crash back.
 */
import { ConnectionPool, NetworkError } from '@platformatic/kafka';
import { describe, expect, it } from 'vitest';
import { isRetriableKafkaError } from '../../../shared/backends/kafka/errors.js';

type Broker = Parameters<ConnectionPool['get']>[0];

/** What the pool answers for `broker`, through its callback form (the one the clients use). */
function answerFor(pool: ConnectionPool, broker: Broker): Promise<Error | null> {
  return new Promise((resolve, reject) => {
    try {
      pool.get(broker, (error) => resolve(error ?? null));
    } catch (thrown) {
      reject(thrown instanceof Error ? thrown : new Error(String(thrown)));
    }
  });
}

describe('@platformatic/kafka connection pool', () => {
  it.each([
    ['a node id the metadata no longer lists', undefined],
    ['a broker without a host', { host: undefined, port: 9092 }],
  ])('answers %s with a retriable network error instead of throwing', async (_, broker) => {
    const pool = new ConnectionPool('dependency-test');
    const error = await answerFor(pool, broker as unknown as Broker);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error?.message).toMatch(/cluster metadata/);
    // The processes' own classification retries it (a new session, fresh metadata).
    expect(isRetriableKafkaError(error)).toBe(true);
    await pool.close();
  });

  it('still connects to a broker it is given (only the missing case is answered that way)', async () => {
    const pool = new ConnectionPool('dependency-test', { connectTimeout: 2000 });
    // Nothing listens on port 1: a connection error, not the missing-broker one.
    const error = await answerFor(pool, { host: '127.0.0.1', port: 1 });
    expect(error).toBeInstanceOf(Error);
    expect(error?.message).not.toMatch(/cluster metadata/);
    await pool.close();
  });
});
