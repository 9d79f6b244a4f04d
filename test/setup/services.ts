import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * The scale-out and faults layers need the real Redis, Kafka and ClickHouse: start them
 * (installing them the first time) unless they already run. Idempotent and about 0.1 s when they
 * are up. They are left running for the next run; `npm run services:down` stops them.
 */
export default function setup(): void {
  const root = path.resolve(import.meta.dirname, '..', '..');
  execFileSync('bash', [path.join(root, 'scripts/services/up.sh')], { stdio: 'inherit', cwd: root });
}
