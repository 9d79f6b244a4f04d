import { upProfile } from '../helpers/profile.js';

/**
 * The "cluster" project's global setup: the cluster profile of the services script (Redis Cluster,
 * 3 primaries + 3 replicas; Kafka and ClickHouse are the single profile's, started by
 * test/setup/services.ts before this), started unless it runs, and whole. A component that cannot
 * be started fails the suite (up.sh exits non-zero); nothing is skipped.
 */
export default function setup(): void {
  upProfile('cluster');
}
