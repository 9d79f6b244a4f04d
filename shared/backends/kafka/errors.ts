/**
 * Broker-error classification of @platformatic/kafka's errors, shared by every Kafka client of the
 * processes: which errors are about a send's content, which mean "partition leadership moved, ask
 * again", which are a request's deadline passing, and which are retriable at all (the rest are
 * configuration or permission problems that waiting cannot fix).
 */

/** Broker errors about a send's content rather than the broker's health. */
const MESSAGE_ERRORS = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD', 'CORRUPT_MESSAGE', 'INVALID_TIMESTAMP']);

/**
 * Refusals that mean "not appended, ask the new leader": safe to send again. Kafka renamed
 * NOT_LEADER_FOR_PARTITION to NOT_LEADER_OR_FOLLOWER (code 6); both names are accepted.
 */
const LEADERSHIP_ERRORS = new Set(['NOT_LEADER_FOR_PARTITION', 'NOT_LEADER_OR_FOLLOWER', 'LEADER_NOT_AVAILABLE', 'UNKNOWN_TOPIC_OR_PARTITION', 'FENCED_LEADER_EPOCH']);

/**
 * Broker errors the protocol table marks non-retriable although waiting fixes them: a group
 * coordinator that is loading or moved, a group that is rebalancing, a member the coordinator
 * forgot while it could not hear from it (the consumer joins again).
 */
const TRANSIENT_BROKER_ERRORS = new Set([
  'COORDINATOR_LOAD_IN_PROGRESS',
  'COORDINATOR_NOT_AVAILABLE',
  'NOT_COORDINATOR',
  'REBALANCE_IN_PROGRESS',
  'ILLEGAL_GENERATION',
  'UNKNOWN_MEMBER_ID',
  'REQUEST_TIMED_OUT',
  'NOT_ENOUGH_REPLICAS',
  'NOT_ENOUGH_REPLICAS_AFTER_APPEND',
]);

/** @platformatic/kafka's error codes that are about the connection, never the request. */
const CONNECTION_CODES = new Set(['PLT_KFK_NETWORK', 'PLT_KFK_TIMEOUT', 'PLT_KFK_UNEXPECTED_CORRELATION_ID']);

/** The chain error → cause → cause..., at most a few deep. */
function chain(error: unknown): object[] {
  const out: object[] = [];
  for (let e = error; typeof e === 'object' && e !== null && out.length < 5; e = 'cause' in e ? e.cause : null) out.push(e);
  return out;
}

/**
 * The errors inside: the cause chain, and the errors a MultipleErrors gathers (the library answers
 * a request with per-partition errors in one ResponseError, and a failed call on several brokers
 * with one error each), a few levels deep.
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

const stringField = (e: object, key: string): string | null => {
  const v = (e as Record<string, unknown>)[key];
  return typeof v === 'string' ? v : null;
};

/** The broker's error name (ProtocolError's apiId), or null when the broker named none. */
export function brokerErrorType(error: unknown): string | null {
  for (const e of nested(error)) {
    const id = stringField(e, 'apiId');
    if (id !== null) return id;
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

/** A request (or a connection attempt) that got no answer within its deadline. */
export function isKafkaTimeout(error: unknown): boolean {
  return nested(error).some((e) => {
    const code = stringField(e, 'code');
    const message = stringField(e, 'message') ?? '';
    return code !== null && code.startsWith('PLT_KFK_') && /timed out/i.test(message);
  });
}

/** CreateTopics refused because the topic exists (another process created it first). */
export function isTopicExistsError(error: unknown): boolean {
  return nested(error).some((e) => stringField(e, 'apiId') === 'TOPIC_ALREADY_EXISTS');
}

/** The metadata call named a topic the broker does not have. */
export function isUnknownTopicError(error: unknown): boolean {
  return nested(error).some((e) => stringField(e, 'apiId') === 'UNKNOWN_TOPIC_OR_PARTITION' || /^Unknown topic /.test(stringField(e, 'message') ?? ''));
}

/**
 * Whether waiting and trying again can fix this error. A broker error decides when there is one:
 * the protocol's own "retriable" flag (leadership elections, an unknown topic-partition...), or a
 * coordinator or group state that passes (TRANSIENT_BROKER_ERRORS); authorization failures and
 * invalid topics are not. Otherwise a connection that failed, closed or timed out is retriable,
 * and so is an unknown topic (a gateway creates it). Everything else (SASL failures, unsupported
 * versions, programming errors, errors that do not come from Kafka) is not.
 */
export function isRetriableKafkaError(error: unknown): boolean {
  const all = nested(error);
  let sawBrokerError = false;
  for (const e of all) {
    const id = stringField(e, 'apiId');
    if (id === null) continue;
    sawBrokerError = true;
    if (TRANSIENT_BROKER_ERRORS.has(id)) continue;
    if ((e as { canRetry?: unknown }).canRetry !== true) return false;
  }
  if (sawBrokerError) return true;
  if (isUnknownTopicError(error)) return true;
  return all.some((e) => {
    const code = stringField(e, 'code');
    return code !== null && CONNECTION_CODES.has(code);
  });
}

/** "NOT_LEADER_OR_FOLLOWER: ...", "Error: Connection to 127.0.0.1:9092 failed. (...)", for logs and /readyz. */
export function describeKafkaError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const root = nested(error).at(-1);
  const tail = root !== error && root instanceof Error && root.message !== error.message ? ` (${errorName(root)}: ${root.message})` : '';
  return `${errorName(error)}: ${error.message}${tail}`;
}

/**
 * Every message down the chain, for a start refused in one line: @platformatic/kafka reports a
 * refused login or certificate as "Cannot connect to any broker." with the broker's own error
 * inside (errors[], cause). describeKafkaError, for repeated log lines, names only the top and the root.
 */
export function kafkaErrorChain(err: unknown, depth = 0): string {
  if (!(err instanceof Error)) return String(err);
  const errors: unknown = (err as Error & { errors?: unknown }).errors;
  const inner: unknown[] = [...(Array.isArray(errors) ? (errors as unknown[]) : []), ...(err.cause === undefined ? [] : [err.cause])];
  const first = inner.find((e) => e instanceof Error);
  if (first === undefined || depth > 5) return err.message;
  const below = kafkaErrorChain(first, depth + 1);
  return below === err.message ? err.message : `${err.message.replace(/\.$/, '')}: ${below}`;
}

function errorName(error: Error): string {
  const id = stringField(error, 'apiId');
  if (id !== null) return id;
  return error.constructor.name !== '' && error.constructor.name !== 'Error' ? error.constructor.name : error.name;
}
