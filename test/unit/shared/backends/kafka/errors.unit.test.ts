/**
 * Which @platformatic/kafka errors the processes retry, which are a deadline passing, and how they
 * are named in logs and /readyz, on the library's own error classes as its connection and response
 * layers build them.
 */
import { AuthenticationError, MultipleErrors, NetworkError, ProtocolError, ResponseError, TimeoutError, UserError } from '@platformatic/kafka';
import { describe, expect, it } from 'vitest';
import { TimeoutError as OurTimeout } from '../../../../../shared/util/async.js';
import {
  brokerErrorType,
  describeKafkaError,
  isKafkaTimeout,
  isLeadershipError,
  isMessageError,
  isRetriableKafkaError,
  isTopicExistsError,
  isUnknownTopicError,
  kafkaErrorChain,
} from '../../../../../shared/backends/kafka/errors.js';

const METADATA_API = 3;
/** A response whose topic-level error code is `code`, as the library reports it. */
const responseError = (code: number): ResponseError => new ResponseError(METADATA_API, 12, { '/topics/0': [code, null] }, {});

describe('Kafka error classification', () => {
  it('retries what waiting can fix', () => {
    expect(isRetriableKafkaError(responseError(3))).toBe(true); // UNKNOWN_TOPIC_OR_PARTITION
    expect(isRetriableKafkaError(responseError(5))).toBe(true); // LEADER_NOT_AVAILABLE
    expect(isRetriableKafkaError(new UserError('Unknown topic gateway.events.'))).toBe(true);
    expect(isRetriableKafkaError(new NetworkError('Connection to 127.0.0.1:1 failed.', { cause: new Error('connect ECONNREFUSED') }))).toBe(true);
    expect(isRetriableKafkaError(new NetworkError('Connection closed'))).toBe(true);
    // The library marks a request timeout non-retriable; a stalled broker is exactly what waiting fixes.
    expect(isRetriableKafkaError(new TimeoutError('Request timed out'))).toBe(true);
    // Group coordinator states the protocol table marks non-retriable, which pass.
    expect(isRetriableKafkaError(new ProtocolError('NOT_COORDINATOR'))).toBe(true);
    expect(isRetriableKafkaError(new ProtocolError('COORDINATOR_LOAD_IN_PROGRESS'))).toBe(true);
    expect(isRetriableKafkaError(new ProtocolError('UNKNOWN_MEMBER_ID'))).toBe(true);
    // Several brokers, each failing retriably.
    expect(isRetriableKafkaError(new MultipleErrors('Cannot connect to any broker.', [new NetworkError('a'), new NetworkError('b')]))).toBe(true);
  });

  it('does not retry what waiting cannot fix', () => {
    expect(isRetriableKafkaError(responseError(29))).toBe(false); // TOPIC_AUTHORIZATION_FAILED
    expect(isRetriableKafkaError(responseError(17))).toBe(false); // INVALID_TOPIC_EXCEPTION
    expect(isRetriableKafkaError(new ProtocolError('GROUP_AUTHORIZATION_FAILED'))).toBe(false);
    // One refusal among retriable errors decides.
    expect(isRetriableKafkaError(new MultipleErrors('failed', [new NetworkError('a'), new ProtocolError('TOPIC_AUTHORIZATION_FAILED')]))).toBe(false);
    expect(isRetriableKafkaError(new AuthenticationError('SASL authentication failed.'))).toBe(false);
    expect(isRetriableKafkaError(new UserError('Cannot find broker with node id 7'))).toBe(false);
    expect(isRetriableKafkaError(new TypeError('x is not a function'))).toBe(false);
    expect(isRetriableKafkaError('not even an error')).toBe(false);
  });

  it('tells deadlines apart: the library timing a request or a connection out', () => {
    expect(isKafkaTimeout(new TimeoutError('Request timed out'))).toBe(true);
    expect(isKafkaTimeout(new TimeoutError('Connection to 127.0.0.1:9092 timed out.'))).toBe(true);
    expect(isKafkaTimeout(new MultipleErrors('metadata failed 1 times.', [new TimeoutError('Request timed out')]))).toBe(true);
    expect(isKafkaTimeout(new NetworkError('Connection closed'))).toBe(false);
    // Ours is caught by the caller (withTimeout); a foreign "timed out" is not the library's.
    expect(isKafkaTimeout(new OurTimeout('kafka send did not answer within 5000 ms'))).toBe(false);
    expect(isKafkaTimeout(new Error('Request timed out'))).toBe(false);
  });

  it('names leadership moves, refusals of content, existing and unknown topics', () => {
    expect(brokerErrorType(responseError(6))).toBe('NOT_LEADER_OR_FOLLOWER');
    expect(isLeadershipError(responseError(6))).toBe(true);
    expect(isLeadershipError(responseError(74))).toBe(true); // FENCED_LEADER_EPOCH
    expect(isMessageError(responseError(10))).toBe(true); // MESSAGE_TOO_LARGE
    expect(isMessageError(responseError(6)) || isLeadershipError(responseError(10))).toBe(false);
    expect(isTopicExistsError(responseError(36))).toBe(true);
    expect(isTopicExistsError(responseError(3))).toBe(false);
    expect(isUnknownTopicError(responseError(3))).toBe(true);
    expect(isUnknownTopicError(new UserError('Unknown topic t.'))).toBe(true);
    expect(isUnknownTopicError(responseError(5))).toBe(false);
  });

  it('describes an error by its broker error name or class, with the innermost cause', () => {
    expect(describeKafkaError(new ProtocolError('INVALID_TOPIC_EXCEPTION'))).toBe(
      'INVALID_TOPIC_EXCEPTION: The request attempted to perform an operation on an invalid topic.',
    );
    const refused = new NetworkError('Connection to 127.0.0.1:1 failed.', { cause: new Error('connect ECONNREFUSED 127.0.0.1:1') });
    expect(describeKafkaError(refused)).toBe('NetworkError: Connection to 127.0.0.1:1 failed. (Error: connect ECONNREFUSED 127.0.0.1:1)');
    expect(describeKafkaError(responseError(6))).toContain('(NOT_LEADER_OR_FOLLOWER: ');
    expect(describeKafkaError('plain text')).toBe('plain text');
  });

  it('spells out the whole chain for a start refused in one line: the broker\'s own words under the client\'s', () => {
    const refusedLogin = new MultipleErrors('Cannot connect to any broker.', [
      new AuthenticationError('SASL authentication failed.', { cause: new Error('Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512') }),
    ]);
    expect(kafkaErrorChain(refusedLogin)).toBe(
      'Cannot connect to any broker: SASL authentication failed: Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512',
    );
    expect(kafkaErrorChain(new Error('Closed connection'))).toBe('Closed connection');
    expect(kafkaErrorChain(42)).toBe('42');
  });
});
