import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The connection settings `npm run services:up` wrote (`.services.env`, or SERVICES_ENV_FILE), for
 * the benches that use the real Redis, Kafka and ClickHouse.
 */
export function servicesEnv(): Record<string, string> {
  const file = process.env.SERVICES_ENV_FILE || path.resolve(import.meta.dirname, '..', '..', '.services.env');
  const env: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) env[m[1]!] = m[2]!;
  }
  return env;
}
