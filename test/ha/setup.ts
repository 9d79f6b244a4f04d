import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * The "ha" project's global setup: the HA profile of the services script (Redis primary + replica +
 * three Sentinels, three Kafka brokers, ClickHouse), started unless it runs. A component that cannot
 * be started fails the suite (up.sh exits non-zero); nothing is skipped.
 */
export default function setup(): void {
  const root = path.resolve(import.meta.dirname, '..', '..');
  execFileSync('bash', [path.join(root, 'scripts/services/up.sh')], {
    stdio: 'inherit',
    cwd: root,
    env: { ...process.env, SERVICES_PROFILE: 'ha' },
  });
}
