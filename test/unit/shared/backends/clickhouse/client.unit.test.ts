import net, { type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { isInsertTimeout, isPermanentClickHouseError, plaintextOnTlsPort } from '../../../../../shared/backends/clickhouse/client.js';

describe('isPermanentClickHouseError: what the worker stops on at once instead of retrying', () => {
  it.each([
    'Code: 193, e.displayText() = DB::Exception: Wrong password for user worker',
    'Code: 192, e.displayText() = DB::Exception: Unknown user nobody',
    'default: Authentication failed: password is incorrect, or there is no user with such name. (AUTHENTICATION_FAILED)',
    'unable to verify the first certificate',
    'certificate has expired',
    'self-signed certificate in certificate chain',
  ])('%s', (message) => {
    expect(isPermanentClickHouseError(new Error(message))).toBe(true);
  });

  it.each(['connect ECONNREFUSED 127.0.0.1:8123', 'read ECONNRESET', 'Timeout error.', 'Code: 159. DB::Exception: Timeout exceeded'])('retries %s', (message) => {
    expect(isPermanentClickHouseError(new Error(message))).toBe(false);
  });
});

describe('isInsertTimeout: what the worker splits an insert on (worker/insert-pieces.ts)', () => {
  it.each(['Timeout error.', 'Code: 159. DB::Exception: Timeout exceeded: elapsed 10.1 seconds', 'TIMEOUT_EXCEEDED', 'connect ETIMEDOUT 10.0.0.1:8123'])('%s', (message) => {
    expect(isInsertTimeout(new Error(message))).toBe(true);
  });

  it.each(['connect ECONNREFUSED 127.0.0.1:8123', 'read ECONNRESET', 'Code: 252. DB::Exception: Too many parts (300)', 'Code: 27. Cannot parse input'])('not %s', (message) => {
    expect(isInsertTimeout(new Error(message))).toBe(false);
  });
});

describe('plaintextOnTlsPort: a dropped plaintext request is asked whether the port speaks TLS', () => {
  const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });

  it('does not probe for an https:// URL or an error other than a dropped request', async () => {
    // Port 9 (discard) is never asked: these return before any connection.
    expect(await plaintextOnTlsPort('https://127.0.0.1:9', reset)).toBeNull();
    expect(await plaintextOnTlsPort('http://127.0.0.1:9', new Error('connect ECONNREFUSED 127.0.0.1:9'))).toBeNull();
  });

  it('answers null for a port that drops the request and does not speak TLS either', async () => {
    // A server that closes every connection without a word: a restarting ClickHouse, not a TLS port.
    const server = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      expect(await plaintextOnTlsPort(`http://127.0.0.1:${port}`, reset)).toBeNull();
    } finally {
      server.close();
    }
  });
  // The positive case needs a certificate: test/secure/refusals.secure.test.ts runs it against
  // ClickHouse's HTTPS port ("plaintext client on its TLS port").
});
