import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../shared/config/index.js';
import { serverTlsFromConfig } from '../../../../shared/runtime/tls.js';

/** Any readable file passes the load-time check; serverTlsFromConfig does not read them. */
const file = import.meta.filename;

describe('serverTlsFromConfig', () => {
  it('plain HTTP without TLS settings', () => {
    expect(serverTlsFromConfig(loadConfig({}))).toBeNull();
  });

  it('both files: TLS', () => {
    expect(serverTlsFromConfig(loadConfig({ TLS_CERT_FILE: file, TLS_KEY_FILE: file }))).toEqual({ certFile: file, keyFile: file });
  });

  it.each([
    [{ TLS_CERT_FILE: file }, /only TLS_CERT_FILE is set/],
    [{ TLS_KEY_FILE: file }, /only TLS_KEY_FILE is set/],
    [{ HTTP_PORT: '8090' }, /HTTP_PORT is the plain listener beside TLS/],
    [{ TLS_CERT_FILE: file, TLS_KEY_FILE: file, HTTP_PORT: '8080' }, /HTTP_PORT and PORT must differ/],
  ])('refuses %j', (env, message) => {
    expect(() => serverTlsFromConfig(loadConfig(env))).toThrow(message);
  });

  it('an unreadable file stops the load, naming the variable and the file', () => {
    expect(() => loadConfig({ TLS_CERT_FILE: '/no/such.pem', TLS_KEY_FILE: file })).toThrow(/TLS_CERT_FILE: cannot read \/no\/such\.pem \(ENOENT\)/);
    expect(() => loadConfig({ HTTP_PORT: '70000' })).toThrow(/HTTP_PORT must be a port/);
  });
});
