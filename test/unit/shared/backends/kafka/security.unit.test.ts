import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../../shared/config/index.js';
import { kafkaSecurityFromConfig, platformaticSecurity } from '../../../../../shared/backends/kafka/security.js';

/** Files are named but never read by loadConfig's check here: a readFile stand-in returns their names. */
const files = (env: Record<string, string>) => loadConfig({ ...env }, () => 'pw');
const readFile = (f: string): Buffer => Buffer.from(`<${f}>`);
const existing = import.meta.filename;

describe('kafkaSecurityFromConfig', () => {
  it('PLAINTEXT by default: no TLS, no SASL, and the client gets no options', () => {
    const security = kafkaSecurityFromConfig(loadConfig({}).kafka, readFile);
    expect(security).toEqual({ tls: null, sasl: null });
    expect(platformaticSecurity(security)).toEqual({});
  });

  it('SASL_SSL with SCRAM and a CA: the client gets TLS 1.2+ with the CA and the credentials', () => {
    const config = files({
      KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
      KAFKA_SASL_MECHANISM: 'SCRAM-SHA-256',
      KAFKA_SASL_USERNAME: 'gateway',
      KAFKA_SASL_PASSWORD_FILE: '/run/secrets/kafka',
      KAFKA_TLS_CA_FILE: existing,
    });
    const security = kafkaSecurityFromConfig(config.kafka, readFile);
    expect(security.tls).toEqual({ minVersion: 'TLSv1.2', ca: Buffer.from(`<${existing}>`) });
    expect(platformaticSecurity(security)).toEqual({ tls: security.tls, sasl: { mechanism: 'SCRAM-SHA-256', username: 'gateway', password: 'pw' } });
  });

  it('SSL with a client certificate (mutual TLS), no SASL', () => {
    const config = loadConfig({ KAFKA_SECURITY_PROTOCOL: 'SSL', KAFKA_TLS_CERT_FILE: existing, KAFKA_TLS_KEY_FILE: existing });
    const security = kafkaSecurityFromConfig(config.kafka, readFile);
    expect(security.sasl).toBeNull();
    expect(security.tls).toMatchObject({ cert: Buffer.from(`<${existing}>`), key: Buffer.from(`<${existing}>`) });
  });

  it.each([
    [{ KAFKA_SECURITY_PROTOCOL: 'SASL_SSL' }, /needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD/],
    [{ KAFKA_SECURITY_PROTOCOL: 'SSL', KAFKA_TLS_CERT_FILE: existing }, /KAFKA_TLS_CERT_FILE and KAFKA_TLS_KEY_FILE go together/],
    [{ KAFKA_TLS_CA_FILE: existing }, /KAFKA_TLS_\* files are set but KAFKA_SECURITY_PROTOCOL is PLAINTEXT/],
    [{ KAFKA_SASL_USERNAME: 'gateway' }, /KAFKA_SASL_\* credentials are set but KAFKA_SECURITY_PROTOCOL is PLAINTEXT/],
  ])('refuses a half configuration, naming the variables: %j', (env, message) => {
    expect(() => kafkaSecurityFromConfig(loadConfig(env).kafka, readFile)).toThrow(message);
  });

  it('refuses an unknown protocol or mechanism at load, with the words allowed', () => {
    expect(() => loadConfig({ KAFKA_SECURITY_PROTOCOL: 'TLS' })).toThrow(/KAFKA_SECURITY_PROTOCOL must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL/);
    expect(() => loadConfig({ KAFKA_SASL_MECHANISM: 'GSSAPI' })).toThrow(/KAFKA_SASL_MECHANISM must be PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512/);
  });
});
