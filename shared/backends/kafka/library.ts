/**
 * The one Kafka client library of every process, @platformatic/kafka, loaded on first use so the
 * embedded mode never loads it.
 */
export type KafkaModule = typeof import('@platformatic/kafka');

let loading: Promise<KafkaModule> | null = null;
/** Set once the import resolved: every client is made after it, so ConnectionWatch can use it. */
let loaded: KafkaModule | null = null;

/** The library, imported once per process on first use. */
export function kafkaModule(): Promise<KafkaModule> {
  loading ??= import('@platformatic/kafka').then((m) => (loaded = m));
  return loading;
}

/** The library if it has been loaded already (every client is made after it is), else null. */
export function loadedKafkaModule(): KafkaModule | null {
  return loaded;
}
