export {
  KafkaEventLog,
  KeyPartitioner,
  openKafkaEventLog,
  type KafkaEventLogMetrics,
  type KafkaEventLogOptions,
  type KafkaEventLogStats,
} from './event-log.js';
export { createKafkaClient, ensureTopic, kafkaLogCreator, waitForTopic, type KafkaClientOptions, type KafkaLogger, type TopicSpec } from './client.js';
export { brokerErrorType, describeKafkaError, isLeadershipError, isMessageError, isRetriableKafkaError } from './errors.js';
