import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import type { Config } from '../../config/index.js';

/**
 * How every Kafka client of every process connects (KAFKA_SECURITY_PROTOCOL and friends, Kafka's
 * own names): built once from the configuration (kafkaClientOptions in client.ts), then turned
 * into @platformatic/kafka's options here, which baseOptions gives every client of every process.
 */
export interface KafkaSecurity {
  /** TLS options (CA, client certificate) when the protocol is SSL or SASL_SSL; null: plaintext. */
  tls: ConnectionOptions | null;
  /** SASL credentials when the protocol is SASL_*; null: none. */
  sasl: { mechanism: 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512'; username: string; password: string } | null;
}

export const PLAINTEXT: KafkaSecurity = { tls: null, sasl: null };

/** Reads the CA and client certificate files now; refuses a half configuration, naming the variables. */
export function kafkaSecurityFromConfig(kafka: Config['kafka'], readFile: (file: string) => Buffer = (f) => readFileSync(f)): KafkaSecurity {
  const protocol = kafka.securityProtocol;
  const usesTls = protocol === 'SSL' || protocol === 'SASL_SSL';
  const usesSasl = protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL';
  const problems: string[] = [];
  if ((kafka.tlsCertFile === null) !== (kafka.tlsKeyFile === null)) problems.push('KAFKA_TLS_CERT_FILE and KAFKA_TLS_KEY_FILE go together');
  if (!usesTls && (kafka.tlsCaFile !== null || kafka.tlsCertFile !== null)) problems.push(`KAFKA_TLS_* files are set but KAFKA_SECURITY_PROTOCOL is ${protocol} (SSL or SASL_SSL use them)`);
  if (usesSasl && (kafka.saslUsername === null || kafka.saslPassword === null)) problems.push(`KAFKA_SECURITY_PROTOCOL=${protocol} needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD (or KAFKA_SASL_PASSWORD_FILE)`);
  if (!usesSasl && (kafka.saslUsername !== null || kafka.saslPassword !== null)) problems.push(`KAFKA_SASL_* credentials are set but KAFKA_SECURITY_PROTOCOL is ${protocol} (SASL_PLAINTEXT or SASL_SSL use them)`);
  if (problems.length > 0) throw new Error(`Kafka: ${problems.join('; ')}.`);
  return {
    tls: usesTls
      ? {
          minVersion: 'TLSv1.2',
          ...(kafka.tlsCaFile === null ? {} : { ca: readFile(kafka.tlsCaFile) }),
          ...(kafka.tlsCertFile === null || kafka.tlsKeyFile === null ? {} : { cert: readFile(kafka.tlsCertFile), key: readFile(kafka.tlsKeyFile) }),
        }
      : null,
    sasl: usesSasl && kafka.saslUsername !== null && kafka.saslPassword !== null ? { mechanism: kafka.saslMechanism, username: kafka.saslUsername, password: kafka.saslPassword } : null,
  };
}

/** @platformatic/kafka's `tls` and `sasl` options. */
export function platformaticSecurity(security: KafkaSecurity): { tls?: ConnectionOptions; sasl?: { mechanism: 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512'; username: string; password: string } } {
  return {
    ...(security.tls === null ? {} : { tls: security.tls }),
    ...(security.sasl === null ? {} : { sasl: { ...security.sasl } }),
  };
}
