import os from 'node:os';
import path from 'node:path';
import proxyaddr from 'proxy-addr';

/**
 * All configuration comes from the environment (12-factor). Every variable is documented in
 * docs/configuration.md with its default; `loadConfig` validates them and fails fast with a clear message.
 */
export interface Config {
  port: number;
  host: string;
  /**
   * Threads running the public HTTP front end, all listening on PORT (1 = everything on the main
   * thread, as before threads existed). Shared state stays on the main thread (gateway/threads/).
   */
  gatewayThreads: number;
  /**
   * Scale-out mode with several threads: `own` (default), each thread opens its own Redis and
   * Kafka clients, as a separate gateway would; `shared`, the other threads call them through the
   * main thread's clients (which then does most of every request's work: docs/architecture.md).
   */
  gatewayThreadClients: 'shared' | 'own';
  /** Service path, matched case-insensitively, e.g. /service.asmx or /hub/x/service.asmx. */
  servicePath: string;
  /** Service namespace; ends with a slash. */
  namespace: string;
  /** Base URL used in the WSDL and disco addresses instead of the request's Host (behind proxies). */
  publicUrl: string | null;
  /** A deployment's captured WSDL to serve instead of the generated one (checked at start); null = generate. */
  wsdlFile: string | null;
  dataDir: string;
  adminPort: number;
  adminHost: string;
  /** Bearer token of the admin API; null = generate one and store it in DATA_DIR/admin-token. */
  adminToken: string | null;
  /** ADMIN_TOKEN_FILE: a file holding that token instead (one trailing newline ignored); never set with adminToken. */
  adminTokenFile: string | null;
  /** How long the admin API's audit trail keeps an entry. */
  adminAuditRetentionMs: number;
  /** Live event streams open at once on the admin port; past it a new one is answered 503. */
  adminStreamsMax: number;
  /** Events per second each live stream carries at most; the rest are counted in a `skipped` message. */
  adminStreamEventsPerSecond: number;
  /** The console map's tile template ({z}/{x}/{y}); its origin is added to the console's img-src. */
  consoleMapTileUrl: string;
  /** Shown in the map's corner, as text. */
  consoleMapAttribution: string;
  /** IANA zone for dateTimes sent without offset and for dates we send (default for providers). */
  timeZone: string;
  sessionTimeoutMs: number;
  sessionCookieName: string;
  bodyLimitBytes: number;
  passwordMinLength: number;
  lockoutMaxFailures: number;
  lockoutWindowMs: number;
  lockoutDurationMs: number;
  /** Failures of one SystemUser from all addresses inside the window that lock it everywhere. */
  lockoutUserMaxFailures: number;
  /** SystemUser+address pairs the embedded lockout store tracks at most (oldest forgotten first). */
  lockoutTrackedMax: number;
  /**
   * Proxies whose X-Forwarded-For is believed (proxy-addr syntax: addresses, CIDRs, `loopback`,
   * `linklocal`, `uniquelocal`); the client address is the last one not in this list.
   */
  trustedProxies: string[];
  credentialCacheMs: number;
  /** How long a gateway reuses a provider record it read (its own writes invalidate at once). */
  providerCacheMs: number;
  commandTtlMs: number;
  dedupeWindowMs: number;
  /** Bounds of in-memory state, so memory never grows with traffic alone. */
  dedupeMaxKeys: number;
  sessionMax: number;
  /** Per-provider event rate limit (events/s); 0 disables it. Over the limit: -6. */
  rateLimitEventsPerSecond: number;
  /** SQLite `synchronous` pragma of the embedded store: FULL survives power loss, NORMAL a crash. */
  sqliteSynchronous: 'FULL' | 'NORMAL';
  /** Where the embedded store commits event groups: a writer thread (fsync off the event loop) or inline. */
  sqliteCommit: 'thread' | 'inline';
  /** Free disk below which the embedded store reports not ready (/readyz), in bytes. */
  storeMinFreeBytes: number;
  logLevel: string;
  /**
   * Every event id issued is greater than this, in both modes (ids continue above a legacy
   * sequence). Raising it later keeps ids increasing; lowering it changes nothing.
   */
  idFloor: bigint;

  // Distributed mode: each service is used when its URL is set (docs/configuration.md, "Scale-out mode").
  /**
   * Redis for sessions, providers, lockouts, commands, trips and dedupe; null = embedded (unless
   * Sentinels are set). With Sentinels, only its user, password and database number are used.
   */
  redisUrl: string | null;
  /** Sentinels to ask for the current primary (REDIS_SENTINELS); null = connect to REDIS_URL directly. */
  redisSentinels: RedisSentinelAddress[] | null;
  /** The primary's name the Sentinels monitor. */
  redisSentinelName: string;
  /** Password of the Sentinels themselves (requirepass in sentinel.conf); null = none. */
  redisSentinelPassword: string | null;
  /**
   * Replicas that must acknowledge a queued command (Redis WAIT) before the operator is told it is
   * queued; 0 = do not wait (one Redis without replicas). Default 1 with Sentinels, else 0.
   */
  redisCommandReplicas: number;
  /** Longest WAIT for those replicas; past it the operator gets an error instead of "queued". */
  redisCommandWaitMs: number;
  /** Prefix of every Redis key, so several deployments (or test runs) can share one Redis. */
  redisKeyPrefix: string;
  /** Comma-separated Kafka bootstrap brokers; null = embedded event log. */
  kafkaBrokers: string[] | null;
  kafkaTopic: string;
  /** The single-partition topic event-id blocks are taken from (kafka-ids.ts). */
  kafkaIdTopic: string;
  /** Ids per block of that topic; the same on every gateway (one with another size issues nothing). */
  idBlockSize: number;
  kafkaClientId: string;
  kafkaGroupId: string;
  /** Producer micro-batch: send after this many ms or this many events, whichever first. */
  producerLingerMs: number;
  producerBatchEvents: number;
  /** Version of the Kafka messages this gateway writes (shared/events/wire.ts): 2 binary, 1 JSON. */
  eventWireVersion: 1 | 2;
  /** Events accepted but not yet acknowledged by Kafka; past it inserts answer -5 at once. */
  maxInFlightEvents: number;
  /** Longest wait for an event to be stored before answering -5. */
  appendTimeoutMs: number;
  /**
   * When the id-blocks topic is found behind the ids already stored (deleted and created again),
   * blocks continue above the highest stored id + this margin, which covers ids other gateways
   * still hold from the old topic (shared/backends/kafka-ids.ts).
   */
  idRecoveryMargin: bigint;
  clickhouseUrl: string | null;
  clickhouseDatabase: string;
  clickhouseUser: string;
  clickhousePassword: string;
  /** CLICKHOUSE_RETENTION_DAYS: days the current schema keeps events (by receipt time); 0 keeps all. */
  clickhouseRetentionDays: number;
  /** Worker batches: insert after this many rows or this many ms, whichever first. */
  workerBatchRows: number;
  workerBatchMs: number;
}

type Env = Record<string, string | undefined>;

export interface RedisSentinelAddress {
  host: string;
  port: number;
}

/** REDIS_SENTINELS: `host:port,host:port,...` (IPv6 hosts in brackets). */
function sentinelAddresses(env: Env): RedisSentinelAddress[] | null {
  const raw = env.REDIS_SENTINELS?.trim();
  if (raw === undefined || raw === '') return null;
  return raw
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '')
    .map((a) => {
      const m = /^(\[[^\]]+\]|[^:\s]+):(\d{1,5})$/.exec(a);
      const port = m === null ? NaN : Number(m[2]);
      if (m === null || port < 1 || port > 65535) throw new ConfigError(`REDIS_SENTINELS must be host:port,host:port,...; "${a}" is not host:port.`);
      return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
    });
}

export class ConfigError extends Error {}

function int(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}".`);
  const n = Number(raw);
  if (n < min) throw new ConfigError(`${name} must be at least ${min}, got ${n}.`);
  return n;
}

/** ID_BLOCK_SIZE: 1 to a million ids per block (larger blocks only waste ids at each restart). */
function blockSize(env: Env): number {
  const n = int(env, 'ID_BLOCK_SIZE', 1000, 1);
  if (n > 1_000_000) throw new ConfigError(`ID_BLOCK_SIZE must be at most 1000000, got ${n}.`);
  return n;
}

/** Front-end threads at most: past a few per core they only add contention on the main thread. */
export const MAX_GATEWAY_THREADS = 64;

/**
 * GATEWAY_THREADS when unset: a front-end thread per core but one, at least one. The process needs
 * more than its front ends: the SQLite writer thread (about a third of a core at 20,000 inserts/s),
 * V8's GC helpers and the kernel's network work. Measured on 2 cores (bench/RESULTS.md, issue 17's
 * thread count): 1 thread served 1.2-1.3x the requests of 2 at 0.8x the CPU per request, the
 * second thread's calls into the main thread costing more than the core it could not have. Only
 * 1 and 2 cores were measured here; on larger machines check with `npm run bench:threads`.
 */
export function defaultGatewayThreads(cores: number = os.availableParallelism()): number {
  return Math.max(1, cores - 1);
}

/** Event ids are signed 64-bit (SQLite INTEGER, ClickHouse Int64): the largest one. */
export const MAX_EVENT_ID = 2n ** 63n - 1n;

/** A whole number up to `max`, exact beyond 2^53. */
function bigWhole(env: Env, name: string, fallback: bigint, max: bigint): bigint {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${env[name]}".`);
  const n = BigInt(raw);
  if (n > max) throw new ConfigError(`${name} must be at most ${max} (event ids are 64-bit), got ${raw}.`);
  return n;
}

export const DEFAULT_MAP_TILE_URL = 'https://tile.openstreetmap.org/{z}/{x}/{y}.png';

/** An http(s) template with {z}, {x} and {y}, and a plain host (no {s}): its origin goes into a CSP. */
function mapTileUrl(env: Env): string {
  const raw = str(env, 'CONSOLE_MAP_TILE_URL', DEFAULT_MAP_TILE_URL);
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    // Reported below.
  }
  const placeholders = ['{z}', '{x}', '{y}'].every((p) => raw.includes(p));
  if (url === null || !/^https?:$/.test(url.protocol) || /[{}%]/.test(url.host) || !placeholders) {
    throw new ConfigError(`CONSOLE_MAP_TILE_URL must be an http(s) URL with {z}, {x} and {y} and a plain host, got "${raw}".`);
  }
  return raw;
}

/** ADMIN_TOKEN_FILE, resolved; the token has one source, so setting ADMIN_TOKEN too is an error. */
function adminTokenFile(env: Env): string | null {
  if (!env.ADMIN_TOKEN_FILE) return null;
  if (env.ADMIN_TOKEN) throw new ConfigError('ADMIN_TOKEN and ADMIN_TOKEN_FILE are both set; set one of them.');
  return path.resolve(env.ADMIN_TOKEN_FILE);
}

function str(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  return raw === undefined || raw === '' ? fallback : raw;
}

export function isValidTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function trustedProxies(env: Env): string[] {
  const list = str(env, 'TRUSTED_PROXIES', 'loopback')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '' && p !== 'none');
  try {
    proxyaddr.compile(list);
  } catch (err) {
    throw new ConfigError(`TRUSTED_PROXIES: ${err instanceof Error ? err.message : String(err)}`);
  }
  return list;
}

export function loadConfig(env: Env = process.env): Config {
  let servicePath = str(env, 'SERVICE_PATH', '/service.asmx');
  if (!servicePath.startsWith('/')) servicePath = `/${servicePath}`;
  servicePath = servicePath.replace(/\/+$/, '');
  if (servicePath === '') throw new ConfigError('SERVICE_PATH must not be empty.');

  let namespace = str(env, 'SERVICE_NAMESPACE', 'http://tempuri.org/');
  if (!namespace.endsWith('/')) namespace += '/';

  const publicUrl = env.PUBLIC_URL ? env.PUBLIC_URL.replace(/\/+$/, '') : null;
  if (publicUrl !== null && !/^https?:\/\/[^/]+/.test(publicUrl)) {
    throw new ConfigError(`PUBLIC_URL must be an http(s) URL, got "${publicUrl}".`);
  }

  const timeZone = str(env, 'TIME_ZONE', 'UTC');
  if (!isValidTimeZone(timeZone)) throw new ConfigError(`TIME_ZONE "${timeZone}" is not an IANA time zone.`);

  const sync = str(env, 'SQLITE_SYNCHRONOUS', 'FULL').toUpperCase();
  if (sync !== 'FULL' && sync !== 'NORMAL') throw new ConfigError('SQLITE_SYNCHRONOUS must be FULL or NORMAL.');

  const wireVersion = str(env, 'EVENT_WIRE_VERSION', '2');
  if (wireVersion !== '1' && wireVersion !== '2') throw new ConfigError('EVENT_WIRE_VERSION must be 1 or 2.');

  const commit = str(env, 'SQLITE_COMMIT', 'thread').toLowerCase();
  if (commit !== 'thread' && commit !== 'inline') throw new ConfigError('SQLITE_COMMIT must be thread or inline.');

  const gatewayThreads = int(env, 'GATEWAY_THREADS', defaultGatewayThreads(), 1);
  const sentinels = sentinelAddresses(env);
  if (gatewayThreads > MAX_GATEWAY_THREADS) throw new ConfigError(`GATEWAY_THREADS must be at most ${MAX_GATEWAY_THREADS}, got ${gatewayThreads}.`);

  const threadClients = str(env, 'GATEWAY_THREAD_CLIENTS', 'own').toLowerCase();
  if (threadClients !== 'shared' && threadClients !== 'own') throw new ConfigError('GATEWAY_THREAD_CLIENTS must be shared or own.');

  const minute = 60_000;
  return {
    port: int(env, 'PORT', 8080),
    gatewayThreads,
    gatewayThreadClients: threadClients,
    host: str(env, 'HOST', '0.0.0.0'),
    servicePath,
    namespace,
    publicUrl,
    wsdlFile: env.WSDL_FILE ? path.resolve(env.WSDL_FILE) : null,
    dataDir: path.resolve(str(env, 'DATA_DIR', './data')),
    adminPort: int(env, 'ADMIN_PORT', 8081),
    adminHost: str(env, 'ADMIN_HOST', '127.0.0.1'),
    adminToken: env.ADMIN_TOKEN ? env.ADMIN_TOKEN : null,
    adminTokenFile: adminTokenFile(env),
    adminAuditRetentionMs: int(env, 'ADMIN_AUDIT_RETENTION_DAYS', 90, 1) * 24 * 60 * minute,
    adminStreamsMax: int(env, 'ADMIN_STREAMS_MAX', 100, 1),
    adminStreamEventsPerSecond: int(env, 'ADMIN_STREAM_EVENTS_PER_SECOND', 100, 1),
    consoleMapTileUrl: mapTileUrl(env),
    consoleMapAttribution: str(env, 'CONSOLE_MAP_ATTRIBUTION', '© OpenStreetMap contributors'),
    timeZone,
    sessionTimeoutMs: int(env, 'SESSION_TIMEOUT_MINUTES', 20, 1) * minute,
    sessionCookieName: str(env, 'SESSION_COOKIE_NAME', 'ASP.NET_SessionId'),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024),
    passwordMinLength: int(env, 'PASSWORD_MIN_LENGTH', 6, 1),
    lockoutMaxFailures: int(env, 'LOCKOUT_MAX_FAILURES', 10, 1),
    lockoutWindowMs: int(env, 'LOCKOUT_WINDOW_MINUTES', 15, 1) * minute,
    lockoutDurationMs: int(env, 'LOCKOUT_MINUTES', 15, 1) * minute,
    lockoutUserMaxFailures: int(env, 'LOCKOUT_USER_MAX_FAILURES', 1000, 1),
    lockoutTrackedMax: int(env, 'LOCKOUT_TRACKED_MAX', 100_000, 1),
    trustedProxies: trustedProxies(env),
    credentialCacheMs: int(env, 'CREDENTIAL_CACHE_SECONDS', 60) * 1000,
    providerCacheMs: int(env, 'PROVIDER_CACHE_MS', 1000),
    commandTtlMs: int(env, 'COMMAND_TTL_HOURS', 24, 1) * 60 * minute,
    dedupeWindowMs: int(env, 'DEDUPE_WINDOW_MINUTES', 10) * minute,
    dedupeMaxKeys: int(env, 'DEDUPE_MAX_KEYS', 1_000_000, 1),
    sessionMax: int(env, 'SESSION_MAX', 1_000_000, 1),
    rateLimitEventsPerSecond: int(env, 'RATE_LIMIT_EVENTS_PER_SECOND', 0),
    sqliteSynchronous: sync,
    sqliteCommit: commit,
    storeMinFreeBytes: int(env, 'STORE_MIN_FREE_MB', 64) * 1024 * 1024,
    logLevel: str(env, 'LOG_LEVEL', 'info'),
    // Room for at least a billion ids above it.
    idFloor: bigWhole(env, 'ID_FLOOR', 0n, MAX_EVENT_ID - 1_000_000_000n),
    redisUrl: env.REDIS_URL ? env.REDIS_URL : null,
    redisSentinels: sentinels,
    redisSentinelName: str(env, 'REDIS_SENTINEL_NAME', 'mymaster'),
    redisSentinelPassword: env.REDIS_SENTINEL_PASSWORD ? env.REDIS_SENTINEL_PASSWORD : null,
    redisCommandReplicas: int(env, 'REDIS_COMMAND_REPLICAS', sentinels === null ? 0 : 1),
    redisCommandWaitMs: int(env, 'REDIS_COMMAND_WAIT_MS', 1000, 10),
    redisKeyPrefix: str(env, 'REDIS_KEY_PREFIX', 'gw:'),
    kafkaBrokers: env.KAFKA_BROKERS ? env.KAFKA_BROKERS.split(',').map((b) => b.trim()).filter((b) => b !== '') : null,
    kafkaTopic: str(env, 'KAFKA_TOPIC', 'gateway.events'),
    kafkaIdTopic: str(env, 'KAFKA_ID_TOPIC', `${str(env, 'KAFKA_TOPIC', 'gateway.events')}.id-blocks`),
    idBlockSize: blockSize(env),
    kafkaClientId: str(env, 'KAFKA_CLIENT_ID', 'prestadores-gateway'),
    kafkaGroupId: str(env, 'KAFKA_GROUP_ID', 'gateway-worker'),
    producerLingerMs: int(env, 'PRODUCER_LINGER_MS', 2),
    producerBatchEvents: int(env, 'PRODUCER_BATCH_EVENTS', 500, 1),
    eventWireVersion: wireVersion === '1' ? 1 : 2,
    maxInFlightEvents: int(env, 'MAX_IN_FLIGHT_EVENTS', 20_000, 1),
    appendTimeoutMs: int(env, 'APPEND_TIMEOUT_MS', 5_000, 100),
    idRecoveryMargin: bigWhole(env, 'ID_RECOVERY_MARGIN', 1_000_000n, 1_000_000_000_000n),
    clickhouseUrl: env.CLICKHOUSE_URL ? env.CLICKHOUSE_URL.replace(/\/+$/, '') : null,
    clickhouseDatabase: str(env, 'CLICKHOUSE_DATABASE', 'gateway'),
    clickhouseUser: str(env, 'CLICKHOUSE_USER', 'default'),
    clickhousePassword: env.CLICKHOUSE_PASSWORD ?? '',
    clickhouseRetentionDays: int(env, 'CLICKHOUSE_RETENTION_DAYS', 0, 0),
    workerBatchRows: int(env, 'WORKER_BATCH_ROWS', 20_000, 1),
    workerBatchMs: int(env, 'WORKER_BATCH_MS', 500, 1),
  };
}

/** Is Redis configured at all (a direct URL or Sentinels)? */
export function redisConfigured(config: Pick<Config, 'redisUrl' | 'redisSentinels'>): boolean {
  return config.redisUrl !== null || config.redisSentinels !== null;
}
