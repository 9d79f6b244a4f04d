import { describe, expect, it } from 'vitest';
import { isPermanentClickHouseError } from '../../../../../shared/backends/clickhouse/client.js';

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
