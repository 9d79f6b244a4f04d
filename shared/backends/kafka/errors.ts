/**
 * Broker-error classification, shared by the producer (event log, @platformatic/kafka) and the
 * consumer (worker, kafkajs): which errors are about a send's content, which mean "partition
 * leadership moved, ask again", and which are retriable at all (the rest are configuration or
 * permission problems that waiting cannot fix).
 */

/** Broker errors about a send's content rather than the broker's health. */
const MESSAGE_ERRORS = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD', 'CORRUPT_MESSAGE', 'INVALID_TIMESTAMP']);

/**
 * Refusals that mean "not appended, ask the new leader": safe to send again. Kafka renamed
 * NOT_LEADER_FOR_PARTITION to NOT_LEADER_OR_FOLLOWER (code 6); kafkajs has the old name.
 */
const LEADERSHIP_ERRORS = new Set(['NOT_LEADER_FOR_PARTITION', 'NOT_LEADER_OR_FOLLOWER', 'LEADER_NOT_AVAILABLE', 'UNKNOWN_TOPIC_OR_PARTITION', 'FENCED_LEADER_EPOCH']);

/**
 * kafkajs errors that kafkajs marks non-retriable although they are transient: a coordinator that
 * is still loading after a broker start, a lock or an operation that timed out while the cluster
 * was busy, or kafkajs' own retries running out on a retriable cause. Waiting fixes all of them.
 */
const TRANSIENT_NAMES = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSBrokerNotFound',
  'KafkaJSNoBrokerAvailableError',
  'KafkaJSMetadataNotLoaded',
  'KafkaJSTopicMetadataNotLoaded',
  'KafkaJSStaleTopicMetadataAssignment',
  'KafkaJSGroupCoordinatorNotFound',
  'KafkaJSLockTimeout',
  'KafkaJSTimeout',
]);

/** The chain error → cause → cause..., at most a few deep (kafkajs wraps two or three times). */
function chain(error: unknown): object[] {
  const out: object[] = [];
  for (let e = error; typeof e === 'object' && e !== null && out.length < 5; e = 'cause' in e ? e.cause : null) out.push(e);
  return out;
}

/**
 * The errors inside: the cause chain, and the errors an AggregateError gathers (@platformatic/kafka
 * answers a produce request with per-partition errors in one ResponseError), a few levels deep.
 */
function nested(error: unknown): object[] {
  const out: object[] = [];
  const visit = (e: unknown, depth: number): void => {
    for (const link of chain(e)) {
      if (out.length >= 20) return;
      out.push(link);
      if (depth < 3 && 'errors' in link && Array.isArray(link.errors)) for (const inner of link.errors as unknown[]) visit(inner, depth + 1);
    }
  };
  visit(error, 0);
  return out;
}

/**
 * The broker's error name: kafkajs' KafkaJSProtocolError carries it in `type` (with retries off a
 * send fails with KafkaJSNumberOfRetriesExceeded whose `cause` is that error); @platformatic/kafka's
 * ProtocolError in `apiId`, inside a ResponseError.
 */
export function brokerErrorType(error: unknown): string | null {
  for (const e of nested(error)) {
    if ('type' in e && typeof e.type === 'string') return e.type;
    if ('apiId' in e && typeof e.apiId === 'string') return e.apiId;
  }
  return null;
}

export function isMessageError(error: unknown): boolean {
  const type = brokerErrorType(error);
  return type !== null && MESSAGE_ERRORS.has(type);
}

export function isLeadershipError(error: unknown): boolean {
  const type = brokerErrorType(error);
  return type !== null && LEADERSHIP_ERRORS.has(type);
}

/**
 * Whether waiting and trying again can fix this error. A broker error code decides when there is
 * one (kafkajs copies Kafka's own "retriable" flag from the protocol's error table: leadership
 * elections and an unknown topic-partition are retriable, authorization failures and invalid
 * topics are not). Otherwise connection-level kafkajs errors are retriable, and so is any kafkajs
 * error kafkajs itself marks retriable. Everything else (SASL failures, unsupported versions,
 * programming errors, errors that do not come from kafkajs) is not.
 */
export function isRetriableKafkaError(error: unknown): boolean {
  const links = chain(error);
  for (const e of links) {
    if ('type' in e && typeof e.type === 'string' && 'retriable' in e) return e.retriable === true;
  }
  for (const e of links) {
    const name = 'name' in e && typeof e.name === 'string' ? e.name : '';
    if (TRANSIENT_NAMES.has(name)) return true;
  }
  const root = links.at(-1);
  if (root === undefined || !('name' in root) || typeof root.name !== 'string' || !root.name.startsWith('KafkaJS')) return false;
  return 'retriable' in root && root.retriable === true;
}

/**
 * "KafkaJSProtocolError: This server does not host this topic-partition", for logs and /readyz.
 * A @platformatic/kafka error is named by its Kafka error (ProtocolError's apiId) when it has one.
 */
export function describeKafkaError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const root = nested(error).at(-1);
  const tail = root !== error && root instanceof Error && root.message !== error.message ? ` (${errorName(root)}: ${root.message})` : '';
  return `${errorName(error)}: ${error.message}${tail}`;
}

function errorName(error: Error): string {
  return 'apiId' in error && typeof error.apiId === 'string' ? error.apiId : error.name;
}
