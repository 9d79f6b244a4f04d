import { upProfile } from '../helpers/profile.js';

/**
 * The "ha" project's global setup: the HA profile of the services script (Redis primary + replica +
 * three Sentinels, three Kafka brokers, ClickHouse), started unless it runs. A component that cannot
 * be started fails the suite (up.sh exits non-zero); nothing is skipped.
 */
export default function setup(): void {
  upProfile('ha');
}
