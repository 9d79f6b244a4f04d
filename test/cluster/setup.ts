import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * The "cluster" project's global setup: the cluster profile of the services script (Redis Cluster,
 * 3 primaries + 3 replicas; Kafka and ClickHouse are the single profile's, started by
 * test/setup/services.ts before this), started unless it runs, and whole. A component that cannot
 * be started fails the suite (up.sh exits non-zero); nothing is skipped.
 */
export default function setup(): void {
  const root = path.resolve(import.meta.dirname, '..', '..');
  execFileSync('bash', [path.join(root, 'scripts/services/up.sh')], {
    stdio: 'inherit',
    cwd: root,
    env: { ...process.env, SERVICES_PROFILE: 'cluster' },
  });
}
