import type { ClusterOptions, RedisOptions } from 'ioredis';
import { credentialsOf, redisClientOptions, tlsOf, urlCredentials, usesTls, type RedisConnectionOptions } from './client.js';

/**
 * Redis Cluster (REDIS_CLUSTER_NODES): ioredis' own cluster client finds the nodes from any of the
 * ones given, sends each command to the primary of its key's hash slot, follows MOVED and ASK
 * (a slot moved or moving) and asks for the layout again after a redirection, a failed node or
 * every slotsRefreshInterval. What it must not do is send a command twice: by default it resends
 * a command whose connection closed before the reply came ("Connection is closed", after a
 * failover delay), and that command may have been applied (a second delivery counted, a command
 * queued twice). `retryDelayOnFailover: 0` turns that resend off: the call fails, and the insert
 * answers -5. Redirections, TRYAGAIN and CLUSTERDOWN are still followed: those replies say the
 * command was not applied.
 *
 * Each node connection has the one-node form's deadlines (client.ts: commandTimeout, a
 * connection silent that long is dropped, keep-alive), its TLS and its ACL user. Commands are
 * never queued while the cluster as a whole is unreachable (`enableOfflineQueue: false`): they fail
 * at once, as in the one-node form when reconnecting fails, instead of waiting without a bound and
 * running long after their caller gave up.
 */
export function redisClusterOptions(options: RedisConnectionOptions): ClusterOptions {
  const {
    retryStrategy: _nodeRetry,
    enableOfflineQueue: _nodeQueue,
    enableAutoPipelining: _nodePipelining,
    ...node
  }: RedisOptions = redisClientOptions(options);
  const fromUrl = options.url === undefined ? {} : urlCredentials(options.url);
  return {
    redisOptions: {
      ...node,
      // A cluster has database 0 only: the URL's number is not used.
      ...(fromUrl.username === undefined ? {} : { username: fromUrl.username }),
      ...(fromUrl.password === undefined ? {} : { password: fromUrl.password }),
      ...credentialsOf(options),
      ...(usesTls(options) ? { tls: tlsOf(options) } : {}),
    },
    // Commands to one node in one event-loop turn go out as one write (one pipeline per primary).
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    scaleReads: 'master',
    retryDelayOnFailover: 0,
    retryDelayOnTryAgain: 100,
    retryDelayOnClusterDown: 100,
    maxRedirections: 16,
    slotsRefreshTimeout: options.connectTimeoutMs ?? 1000,
    // A promoted replica is found by the first MOVED reply or by this refresh, whichever first.
    slotsRefreshInterval: 2000,
    // The cluster as a whole unreachable: try again every 100-500 ms, forever (as the one-node form).
    clusterRetryStrategy: (times) => Math.min(100 * times, 500),
  };
}
