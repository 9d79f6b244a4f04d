import { baseOptions, type KafkaClientOptions } from '../shared/backends/kafka/client.js';
import { ConnectionWatch } from '../shared/backends/kafka/connection-watch.js';
import { isKafkaTimeout } from '../shared/backends/kafka/errors.js';
import { PartitionFetcher, type FetchedPartition } from '../shared/backends/kafka/fetcher.js';
import { kafkaModule } from '../shared/backends/kafka/library.js';

/*
 * The two Kafka clients of one consumer session, as the supervisor (consumer.ts) uses them, and
 * how they are made with @platformatic/kafka. The supervisor decides when a session starts and
 * ends and where to read; these clients only talk to Kafka, each behind the deadline it is given.
 */

/** What a group member tells the supervisor. Each is called only for this session's member. */
export interface GroupMemberEvents {
  /** The group was (re)joined: the partitions of the topic assigned to this member. */
  joined(partitions: number[]): void;
  /** A heartbeat was answered. */
  heartbeat(): void;
  /** The member failed (the group said so, or its connection broke): the session must end. */
  failed(error: Error): void;
}

/** A member of the worker's consumer group: joins it, commits offsets, leaves it. */
export interface GroupMember {
  /** Joins the group; resolves once the join is answered (the assignment comes through `joined`). */
  join(): Promise<void>;
  commit(offsets: readonly { topic: string; partition: number; offset: bigint }[]): Promise<void>;
  /** Leaves the group when the coordinator answers in time, else drops the connections. */
  close(): Promise<void>;
}

/** Reads the topic's partitions from positions the supervisor keeps. */
export type SessionFetcher = Pick<PartitionFetcher, 'fetch' | 'offsets' | 'close'>;
export type { FetchedPartition };

/** Makes a session's clients; a new pair for every session. */
export interface SessionClients {
  member(events: GroupMemberEvents): Promise<GroupMember>;
  fetcher(): Promise<SessionFetcher>;
}

interface KafkaSessionOptions {
  kafka: KafkaClientOptions;
  topic: string;
  groupId: string;
  sessionTimeoutMs: number;
  /**
   * The member's request deadline: a JoinGroup waits at the coordinator until every member
   * rejoined, and a commit or heartbeat sent on the same connection waits behind it.
   */
  memberRequestTimeoutMs: number;
  /** How long a fetch waits at the broker when there is nothing new. */
  maxWaitMs: number;
}

/**
 * A group member (join, heartbeats, commits, on the coordinator's connection) and a fetcher (the
 * partitions' leaders, on connections of its own, so a fetch waiting for records never holds a
 * heartbeat or a commit). The member's silent connections are closed by its ConnectionWatch when a
 * call or a heartbeat times out.
 */
export function kafkaSessionClients(options: KafkaSessionOptions): SessionClients {
  const { kafka, topic, groupId, sessionTimeoutMs, memberRequestTimeoutMs } = options;
  const callMs = memberRequestTimeoutMs + kafka.requestTimeoutMs;
  return {
    async member(events) {
      const { Consumer } = await kafkaModule();
      const member = new Consumer({
        ...baseOptions({ ...kafka, requestTimeoutMs: memberRequestTimeoutMs }, `${kafka.clientId}-group`),
        groupId,
        sessionTimeout: sessionTimeoutMs,
        rebalanceTimeout: sessionTimeoutMs,
        heartbeatInterval: Math.max(500, Math.min(3000, Math.floor(sessionTimeoutMs / 3))),
      });
      const watch = new ConnectionWatch(kafka.keepAliveMs);
      watch.client(member, kafka.brokers);
      member.on('consumer:group:join', ({ assignments }) => {
        events.joined((assignments ?? []).filter((a) => a.topic === topic).flatMap((a) => a.partitions));
      });
      member.on('consumer:heartbeat:end', () => events.heartbeat());
      member.on('consumer:heartbeat:error', ({ error }) => {
        // dropSilent counts on performance.now(), like the watch's own clock (Date.now() here dropped every connection).
        if (isKafkaTimeout(error)) watch.dropSilent(performance.now() - memberRequestTimeoutMs);
      });
      member.on('error', (error: Error) => events.failed(error));
      return {
        join: async () => {
          member.topics.track(topic);
          await watch.within(() => member.joinGroup({}), callMs, 'Kafka joinGroup');
        },
        commit: (offsets) =>
          watch.within(() => member.commit({ offsets: offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: o.offset, leaderEpoch: -1 })) }), callMs, 'Kafka commit'),
        close: () => watch.closeWithin(member.close()),
      };
    },
    fetcher: () => PartitionFetcher.open({ ...kafka, clientId: `${kafka.clientId}-fetch`, topic, maxWaitMs: options.maxWaitMs }),
  };
}
