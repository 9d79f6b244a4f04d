import type { Config } from './load.js';

/** The two ways the service runs (docs/running.md): one process on SQLite, or gateways on Redis + Kafka. */
type DeploymentMode = 'embedded' | 'scale-out';

/** A configuration that names only part of what a mode needs. */
export class ConfigurationMissing extends Error {}

/** Is Redis configured at all (a direct URL, Sentinels or a cluster)? */
export function redisConfigured(redis: Pick<Config['redis'], 'url' | 'sentinels' | 'clusterNodes'>): boolean {
  return redis.url !== null || redis.sentinels !== null || redis.clusterNodes !== null;
}

/** Which mode a configuration asks for; half a scale-out configuration is an error. */
export function deploymentMode(config: Pick<Config, 'redis' | 'kafka'>): DeploymentMode {
  // Sentinels and a cluster are two forms of Redis: naming both is a mistake worth stopping on.
  if (config.redis.sentinels !== null && config.redis.clusterNodes !== null) {
    throw new ConfigurationMissing('REDIS_SENTINELS and REDIS_CLUSTER_NODES name two forms of Redis; set one of them.');
  }
  const redis = redisConfigured(config.redis);
  const kafka = config.kafka.brokers !== null;
  if (redis !== kafka) {
    throw new ConfigurationMissing(
      `REDIS_URL (or REDIS_SENTINELS, or REDIS_CLUSTER_NODES) and KAFKA_BROKERS go together (the scale-out mode needs both); only ${redis ? 'Redis' : 'KAFKA_BROKERS'} is set.`,
    );
  }
  return redis ? 'scale-out' : 'embedded';
}
