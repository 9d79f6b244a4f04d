import type { Config } from './load.js';

/** The two ways the service runs (docs/running.md): one process on SQLite, or gateways on Redis + Kafka. */
type DeploymentMode = 'embedded' | 'scale-out';

/** A configuration that names only part of what a mode needs. */
export class ConfigurationMissing extends Error {}

/** Is Redis configured at all (a direct URL or Sentinels)? */
export function redisConfigured(redis: Pick<Config['redis'], 'url' | 'sentinels'>): boolean {
  return redis.url !== null || redis.sentinels !== null;
}

/** Which mode a configuration asks for; half a scale-out configuration is an error. */
export function deploymentMode(config: Pick<Config, 'redis' | 'kafka'>): DeploymentMode {
  const redis = redisConfigured(config.redis);
  const kafka = config.kafka.brokers !== null;
  if (redis !== kafka) {
    throw new ConfigurationMissing(
      `REDIS_URL (or REDIS_SENTINELS) and KAFKA_BROKERS go together (the scale-out mode needs both); only ${redis ? 'Redis' : 'KAFKA_BROKERS'} is set.`,
    );
  }
  return redis ? 'scale-out' : 'embedded';
}
