import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Connection settings of the real services that `npm run services:up` started (it writes
 * `.services.env`). A suite that needs a missing service fails with this message; it never skips.
 */
export interface Services {
  redisUrl: string;
  kafkaBrokers: string[];
  clickhouseUrl: string;
  clickhouseDatabase: string;
  servicesDir: string;
  /** The broker's listener that advertises a fault proxy's address, and that address (scripts/services/README.md). */
  kafkaProxiedListener: string | null;
  kafkaProxyAddress: string | null;
}

const ROOT = path.resolve(import.meta.dirname, '..', '..');

function readEnvFile(): Record<string, string> {
  const file = process.env.SERVICES_ENV_FILE ?? path.join(ROOT, '.services.env');
  if (!existsSync(file)) return {};
  const out: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

export function services(): Services {
  const env = { ...readEnvFile(), ...process.env };
  const missing = ['REDIS_URL', 'KAFKA_BROKERS', 'CLICKHOUSE_URL'].filter((k) => !env[k]);
  if (missing.length > 0) {
    throw new Error(`${missing.join(', ')} not set: start the real services with \`npm run services:up\` (writes .services.env).`);
  }
  return {
    redisUrl: env.REDIS_URL!,
    kafkaBrokers: env.KAFKA_BROKERS!.split(','),
    clickhouseUrl: env.CLICKHOUSE_URL!,
    clickhouseDatabase: env.CLICKHOUSE_DATABASE ?? 'gateway_test',
    servicesDir: env.SERVICES_DIR ?? path.join(ROOT, '.services'),
    kafkaProxiedListener: env.KAFKA_PROXIED_LISTENER ?? null,
    kafkaProxyAddress: env.KAFKA_PROXY_ADDRESS ?? null,
  };
}

/** A name unique to this test run, for Redis key prefixes, topics, groups and databases. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
}
