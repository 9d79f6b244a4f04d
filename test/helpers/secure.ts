import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The engines of the secure profile (`SERVICES_PROFILE=secure npm run services:up` writes
 * `.services-secure.env`): where the private CA and the certificates are, each principal's
 * password file, and the environment a gateway or a worker runs with against them.
 */
const ROOT = path.resolve(import.meta.dirname, '..', '..');

export interface Secure {
  /** Every line of the env file. */
  env: Record<string, string>;
  certs: { ca: string; server: string; serverKey: string; expired: string; expiredKey: string; otherCa: string; client: string; clientKey: string };
  /** The password (or token) of a principal: redis-gateway, kafka-worker, clickhouse-analyst, admin-token... */
  secret(name: string): string;
  secretFile(name: string): string;
  /** A gateway's environment: Redis as `gateway`, Kafka as `gateway`, ClickHouse as `analyst`, HTTPS listeners. */
  gatewayEnv(): Record<string, string>;
  /** A worker's environment: Redis as `gateway`, Kafka as `worker`, ClickHouse as `worker`. */
  workerEnv(): Record<string, string>;
  /** The migrations user's environment (npm run worker -- --migrate). */
  migratorEnv(): Record<string, string>;
}

export function secure(): Secure {
  const file = process.env.SERVICES_SECURE_ENV_FILE ?? path.join(ROOT, '.services-secure.env');
  if (!existsSync(file)) throw new Error(`${file} is missing: start the secure engines with \`SERVICES_PROFILE=secure npm run services:up\`.`);
  const env: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) env[m[1]!] = m[2]!.replace(/^"(.*)"$/, '$1');
  }
  const certsDir = env.SECURE_CERTS_DIR!;
  const secretsDir = env.SECURE_SECRETS_DIR!;
  const c = (name: string): string => path.join(certsDir, name);
  const secretFile = (name: string): string => path.join(secretsDir, name);
  const common = (): Record<string, string> => ({
    REDIS_URL: env.REDIS_URL!,
    REDIS_USERNAME: 'gateway',
    REDIS_PASSWORD_FILE: secretFile('redis-gateway'),
    REDIS_TLS_CA_FILE: c('ca.pem'),
    KAFKA_BROKERS: env.KAFKA_BROKERS!,
    KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
    KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
    KAFKA_TLS_CA_FILE: c('ca.pem'),
    CLICKHOUSE_URL: env.CLICKHOUSE_URL!,
    CLICKHOUSE_DATABASE: env.CLICKHOUSE_DATABASE!,
    CLICKHOUSE_TLS_CA_FILE: c('ca.pem'),
    TLS_CERT_FILE: c('server.pem'),
    TLS_KEY_FILE: c('server.key'),
    ADMIN_TOKEN_FILE: secretFile('admin-token'),
  });
  return {
    env,
    certs: {
      ca: c('ca.pem'),
      server: c('server.pem'),
      serverKey: c('server.key'),
      expired: c('expired.pem'),
      expiredKey: c('expired.key'),
      otherCa: c('other-ca.pem'),
      client: c('client.pem'),
      clientKey: c('client.key'),
    },
    secret: (name) => readFileSync(secretFile(name), 'utf8').trim(),
    secretFile,
    gatewayEnv: () => ({
      ...common(),
      KAFKA_SASL_USERNAME: 'gateway',
      KAFKA_SASL_PASSWORD_FILE: secretFile('kafka-gateway'),
      CLICKHOUSE_USER: 'analyst',
      CLICKHOUSE_PASSWORD_FILE: secretFile('clickhouse-analyst'),
    }),
    workerEnv: () => ({
      ...common(),
      KAFKA_SASL_USERNAME: 'worker',
      KAFKA_SASL_PASSWORD_FILE: secretFile('kafka-worker'),
      CLICKHOUSE_USER: 'worker',
      CLICKHOUSE_PASSWORD_FILE: secretFile('clickhouse-worker'),
    }),
    migratorEnv: () => ({
      ...common(),
      KAFKA_SASL_USERNAME: 'worker',
      KAFKA_SASL_PASSWORD_FILE: secretFile('kafka-worker'),
      CLICKHOUSE_USER: 'migrator',
      CLICKHOUSE_PASSWORD_FILE: secretFile('clickhouse-migrator'),
    }),
  };
}
