export {
  KafkaEventLog,
  KeyPartitioner,
  openKafkaEventLog,
  type KafkaEventLogMetrics,
  type KafkaEventLogOptions,
  type KafkaEventLogStats,
} from './event-log.js';
export { ConnectionWatch } from './connection-watch.js';
export { ensureTopic, KafkaAdmin, kafkaClientOptions, waitForTopic, type KafkaClientOptions, type KafkaLogger, type TopicSpec } from './client.js';
export { brokerErrorType, describeKafkaError, isKafkaTimeout, isLeadershipError, isMessageError, isRetriableKafkaError } from './errors.js';
