import path from 'node:path';
import { bigWhole, choice, custom, maskUrlPassword, optional, SettingError, text, whole, type Setting } from './kinds.js';
import {
  commaList,
  defaultGatewayThreads,
  httpUrl,
  isValidTimeZone,
  mapTileUrl,
  optionalPort,
  nodeAddresses,
  readableFile,
  redisKeyPrefix,
  servicePath,
  trustedProxies,
  type RedisNodeAddress,
} from './values.js';

/**
 * Every setting of every process, declared once: section, environment variable, kind, default,
 * bounds, a line of description, and whether it is a tuning switch or a secret. `Config` is
 * derived from this table (`config.kafka.topic`), `loadConfig` reads it, `--config` prints it and
 * a unit test holds docs/configuration.md to it. A new setting is one entry here and its row in
 * the docs.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;

/** Front-end threads at most: past a few per core they only add contention on the main thread. */
const MAX_GATEWAY_THREADS = 64;

/** Event ids are signed 64-bit (SQLite INTEGER, ClickHouse Int64): the largest one. */
const MAX_EVENT_ID = 2n ** 63n - 1n;

const DEFAULT_MAP_TILE_URL = 'https://tile.openstreetmap.org/{z}/{x}/{y}.png';

export const SETTINGS = {
  /** The public port: SOAP, HTTP GET/POST, WSDL and help page. */
  service: {
    port: whole({ env: 'PORT', default: 8080, max: 65535, doc: 'public port (SOAP, HTTP GET/POST, WSDL, help page)' }),
    host: text({ env: 'HOST', default: '0.0.0.0', doc: 'public bind address' }),
    httpPort: optionalPort({
      env: 'HTTP_PORT',
      defaultText: '(off)',
      doc: 'with TLS on: a plain-HTTP listener for legacy clients that cannot do TLS (off unless set)',
    }),
    threads: whole({
      env: 'GATEWAY_THREADS',
      default: () => defaultGatewayThreads(),
      defaultText: 'the cores minus one, at least 1',
      min: 1,
      max: MAX_GATEWAY_THREADS,
      doc: 'threads serving the public port, all listening on PORT',
    }),
    path: text({ env: 'SERVICE_PATH', default: '/service.asmx', check: servicePath, doc: 'service path, matched case-insensitively' }),
    namespace: text({
      env: 'SERVICE_NAMESPACE',
      default: 'http://tempuri.org/',
      check: (raw) => (raw.endsWith('/') ? raw : `${raw}/`),
      doc: 'XML namespace the clients were generated against',
    }),
    publicUrl: optional({ env: 'PUBLIC_URL', defaultText: '(from the request\'s Host)', check: httpUrl('PUBLIC_URL'), doc: 'base URL written into the WSDL and disco' }),
    wsdlFile: optional({ env: 'WSDL_FILE', defaultText: '(generated)', check: (raw) => path.resolve(raw), doc: "a deployment's captured WSDL to serve" }),
    bodyLimitBytes: whole({ env: 'BODY_LIMIT_BYTES', default: 1024 * 1024, min: 1024, doc: 'request body limit, enforced while streaming' }),
    trustedProxies: custom({
      env: 'TRUSTED_PROXIES',
      defaultText: '`loopback`',
      parse: trustedProxies,
      fallback: () => ['loopback'],
      show: (v) => (v.length === 0 ? 'none' : v.join(',')),
      doc: "proxies whose X-Forwarded-For is believed for the client address",
    }),
    threadClients: choice({
      env: 'GATEWAY_THREAD_CLIENTS',
      default: 'own',
      words: ['own', 'shared'],
      tuning: true,
      doc: "scale-out with several threads: each its own Redis and Kafka clients, or the main thread's",
    }),
    timeZone: text({
      env: 'TIME_ZONE',
      default: 'UTC',
      check: (raw) => {
        if (!isValidTimeZone(raw)) throw new SettingError(`TIME_ZONE "${raw}" is not an IANA time zone.`);
        return raw;
      },
      doc: 'IANA zone for dateTimes sent without offset and for dates sent',
    }),
  },
  /** TLS of every HTTP listener of the process: the public port, the admin API, the worker's probes. */
  tls: {
    certFile: optional({ env: 'TLS_CERT_FILE', defaultText: '(none: plain HTTP)', check: readableFile('TLS_CERT_FILE'), doc: 'PEM certificate chain; with TLS_KEY_FILE every HTTP listener serves HTTPS (TLS 1.2+)' }),
    keyFile: optional({ env: 'TLS_KEY_FILE', defaultText: '(none)', check: readableFile('TLS_KEY_FILE'), doc: "PEM private key of TLS_CERT_FILE" }),
  },
  /** Sessions of Login / InSession clients (memory of the process that answered Login). */
  sessions: {
    timeoutMs: whole({ env: 'SESSION_TIMEOUT_MINUTES', default: 20, min: 1, times: MINUTE, doc: 'sliding session lifetime, minutes' }),
    cookieName: text({ env: 'SESSION_COOKIE_NAME', default: 'ASP.NET_SessionId', doc: 'session cookie name' }),
    max: whole({ env: 'SESSION_MAX', default: 1_000_000, min: 1, doc: 'live sessions held at most (least recently used end first)' }),
  },
  /** Providers' credentials: password policy, lockouts, caches. */
  logins: {
    passwordMinLength: whole({ env: 'PASSWORD_MIN_LENGTH', default: 6, min: 1, doc: 'shortest password CambiarClave and the admin API accept' }),
    lockoutMaxFailures: whole({ env: 'LOCKOUT_MAX_FAILURES', default: 10, min: 1, doc: 'failures of one SystemUser from one address that lock it there' }),
    lockoutUserMaxFailures: whole({ env: 'LOCKOUT_USER_MAX_FAILURES', default: 1000, min: 1, doc: 'failures of one SystemUser from all addresses that lock it everywhere' }),
    lockoutWindowMs: whole({ env: 'LOCKOUT_WINDOW_MINUTES', default: 15, min: 1, times: MINUTE, doc: 'window for counting failures, minutes' }),
    lockoutDurationMs: whole({ env: 'LOCKOUT_MINUTES', default: 15, min: 1, times: MINUTE, doc: 'lock duration, minutes' }),
    lockoutTrackedMax: whole({ env: 'LOCKOUT_TRACKED_MAX', default: 100_000, min: 1, doc: 'SystemUser+address pairs the embedded mode tracks at most' }),
    credentialCacheMs: whole({ env: 'CREDENTIAL_CACHE_SECONDS', default: 60, times: SECOND, doc: 'how long a verified password is remembered, seconds; 0 disables' }),
    providerCacheMs: whole({ env: 'PROVIDER_CACHE_MS', default: 1000, doc: 'how long a gateway reuses a provider record it read' }),
  },
  /** Accepting events: dedupe, rate limit, how long an insert may wait. */
  events: {
    dedupeWindowMs: whole({ env: 'DEDUPE_WINDOW_MINUTES', default: 10, times: MINUTE, doc: 'window in which a resent identical event returns the first id, minutes' }),
    dedupeMaxKeys: whole({ env: 'DEDUPE_MAX_KEYS', default: 1_000_000, min: 1, doc: 'dedupe keys held in memory at most' }),
    rateLimitPerSecond: whole({ env: 'RATE_LIMIT_EVENTS_PER_SECOND', default: 0, defaultText: '`0` (off)', doc: 'per-provider event rate of a gateway process; past it -6' }),
    appendTimeoutMs: whole({ env: 'APPEND_TIMEOUT_MS', default: 5_000, min: 100, doc: 'longest wait for an event to be stored before answering -5' }),
    maxInFlight: whole({ env: 'MAX_IN_FLIGHT_EVENTS', default: 20_000, min: 1, doc: 'events waiting for Kafka at most; past it inserts answer -5 at once' }),
  },
  commands: {
    ttlMs: whole({ env: 'COMMAND_TTL_HOURS', default: 24, min: 1, times: 60 * MINUTE, doc: 'unfinished commands expire after this many hours' }),
  },
  /** Event ids, in both modes; the id-block topic of the scale-out mode. */
  ids: {
    floor: bigWhole({
      env: 'ID_FLOOR',
      default: 0n,
      // Room for at least a billion ids above it.
      max: MAX_EVENT_ID - 1_000_000_000n,
      maxReason: 'event ids are 64-bit',
      doc: 'every event id issued is greater than this',
    }),
    topic: text({
      env: 'KAFKA_ID_TOPIC',
      default: (env) => `${env.KAFKA_TOPIC || 'gateway.events'}.id-blocks`,
      defaultText: '`<KAFKA_TOPIC>.id-blocks`',
      doc: 'single-partition topic event-id blocks are taken from',
    }),
    blockSize: whole({ env: 'ID_BLOCK_SIZE', default: 1000, min: 1, max: 1_000_000, doc: 'ids per block; the same on every gateway' }),
    recoveryMargin: bigWhole({
      env: 'ID_RECOVERY_MARGIN',
      default: 1_000_000n,
      max: 1_000_000_000_000n,
      maxReason: 'a margin, not an id',
      doc: 'distance above the highest stored id at which blocks restart after the id topic is found behind',
    }),
  },
  /** The admin JSON API, the console it serves, and its live streams. */
  admin: {
    port: whole({ env: 'ADMIN_PORT', default: 8081, max: 65535, doc: 'admin JSON API port' }),
    host: text({ env: 'ADMIN_HOST', default: '127.0.0.1', doc: 'admin bind address' }),
    token: optional({
      env: 'ADMIN_TOKEN',
      secret: true,
      defaultText: '(generated)',
      check: (raw) => {
        // A bearer header cannot carry it: refused here rather than never matching.
        // eslint-disable-next-line no-control-regex -- control characters are what is refused
        if (/[\s\u0000-\u001f\u007f]/.test(raw)) throw new SettingError('ADMIN_TOKEN holds whitespace or a control character; a bearer token cannot carry it.');
        return raw;
      },
      doc: 'the bootstrap administrator\'s bearer token; generated into DATA_DIR/admin-token when unset',
    }),
    auditRetentionMs: whole({ env: 'ADMIN_AUDIT_RETENTION_DAYS', default: 90, min: 1, times: 24 * 60 * MINUTE, doc: 'days the audit trail keeps an entry' }),
    streamsMax: whole({ env: 'ADMIN_STREAMS_MAX', default: 100, min: 1, doc: 'live event streams open at once' }),
    streamEventsPerSecond: whole({ env: 'ADMIN_STREAM_EVENTS_PER_SECOND', default: 100, min: 1, doc: 'events each live stream carries at most per second' }),
    mapTileUrl: custom({
      env: 'CONSOLE_MAP_TILE_URL',
      defaultText: `\`${DEFAULT_MAP_TILE_URL}\``,
      parse: mapTileUrl,
      fallback: () => DEFAULT_MAP_TILE_URL,
      doc: "the console map's tile template",
    }),
    mapAttribution: text({ env: 'CONSOLE_MAP_ATTRIBUTION', default: '© OpenStreetMap contributors', doc: "the console map's attribution line" }),
  },
  /** The embedded store (SQLite under DATA_DIR). */
  embedded: {
    dataDir: text({ env: 'DATA_DIR', default: './data', check: (raw) => path.resolve(raw), doc: 'embedded store and the generated admin token' }),
    sqliteSynchronous: choice({ env: 'SQLITE_SYNCHRONOUS', default: 'FULL', words: ['FULL', 'NORMAL'], doc: 'durability of event commits: FULL survives power loss, NORMAL a crash' }),
    minFreeBytes: whole({ env: 'STORE_MIN_FREE_MB', default: 64, times: 1024 * 1024, doc: 'free disk below which /readyz reports not ready, MB' }),
    sqliteCommit: choice({ env: 'SQLITE_COMMIT', default: 'thread', words: ['thread', 'inline'], tuning: true, doc: 'where event groups commit: a writer thread, or inline (fallback)' }),
  },
  /** Redis: shared state of the scale-out mode. */
  redis: {
    url: optional({ env: 'REDIS_URL', defaultText: '(embedded)', show: maskUrlPassword, doc: 'Redis for shared state' }),
    sentinels: custom<RedisNodeAddress[] | null>({
      env: 'REDIS_SENTINELS',
      defaultText: '(none)',
      parse: nodeAddresses('REDIS_SENTINELS'),
      fallback: () => null,
      show: (v) => (v === null ? '(unset)' : v.map((s) => `${s.host}:${s.port}`).join(',')),
      doc: 'Sentinels to ask for the current primary',
    }),
    clusterNodes: custom<RedisNodeAddress[] | null>({
      env: 'REDIS_CLUSTER_NODES',
      defaultText: '(none)',
      parse: nodeAddresses('REDIS_CLUSTER_NODES'),
      fallback: () => null,
      show: (v) => (v === null ? '(unset)' : v.map((s) => `${s.host}:${s.port}`).join(',')),
      doc: 'Redis Cluster: some of its nodes (host:port,...), the client finds the others',
    }),
    username: optional({ env: 'REDIS_USERNAME', defaultText: '(none)', doc: 'Redis ACL user (instead of one inside REDIS_URL)' }),
    password: optional({ env: 'REDIS_PASSWORD', secret: true, defaultText: '(none)', doc: "that user's password (instead of one inside REDIS_URL)" }),
    tlsCaFile: optional({ env: 'REDIS_TLS_CA_FILE', defaultText: '(system CAs)', check: readableFile('REDIS_TLS_CA_FILE'), doc: 'PEM CA that signed the Redis (and Sentinel) certificates' }),
    sentinelName: text({ env: 'REDIS_SENTINEL_NAME', default: 'mymaster', doc: "the primary's name the Sentinels monitor" }),
    sentinelUsername: optional({ env: 'REDIS_SENTINEL_USERNAME', defaultText: '(none)', doc: 'ACL user of the Sentinels themselves' }),
    sentinelPassword: optional({ env: 'REDIS_SENTINEL_PASSWORD', secret: true, defaultText: '(none)', doc: 'password of the Sentinels themselves' }),
    sentinelTls: choice({ env: 'REDIS_SENTINEL_TLS', default: 'off', words: ['off', 'on'], doc: 'reach the Sentinels over TLS' }),
    commandReplicas: whole({
      env: 'REDIS_COMMAND_REPLICAS',
      default: (env) => (env.REDIS_SENTINELS?.trim() || env.REDIS_CLUSTER_NODES?.trim() ? 1 : 0),
      defaultText: '`1` with Sentinels or a cluster, else `0`',
      doc: 'replicas that must hold a queued command before the operator is told it is queued',
    }),
    commandWaitMs: whole({ env: 'REDIS_COMMAND_WAIT_MS', default: 1000, min: 10, doc: 'longest wait for those replicas' }),
    keyPrefix: text({ env: 'REDIS_KEY_PREFIX', default: 'gw:', check: redisKeyPrefix, doc: 'prefix of every key (no { or })' }),
    commandTimeoutMs: whole({
      env: 'REDIS_COMMAND_TIMEOUT_MS',
      default: 2000,
      min: 100,
      doc: 'a command unanswered this long fails, and a connection silent this long while a command waits is closed and opened anew',
    }),
    connectTimeoutMs: whole({ env: 'REDIS_CONNECT_TIMEOUT_MS', default: 1000, min: 100, doc: 'deadline of each connection attempt' }),
    keepAliveMs: whole({ env: 'REDIS_KEEPALIVE_MS', default: 5000, min: 1000, doc: 'idle time before the first TCP keep-alive probe on a Redis connection' }),
  },
  /** Kafka: the event topic of the scale-out mode. */
  kafka: {
    brokers: custom<string[] | null>({
      env: 'KAFKA_BROKERS',
      defaultText: '(embedded)',
      parse: (raw) => {
        const list = commaList(raw);
        return list.length === 0 ? null : list;
      },
      fallback: () => null,
      show: (v) => (v === null ? '(unset)' : v.join(',')),
      doc: 'comma-separated bootstrap brokers',
    }),
    topic: text({ env: 'KAFKA_TOPIC', default: 'gateway.events', doc: 'event topic' }),
    clientId: text({ env: 'KAFKA_CLIENT_ID', default: 'prestadores-gateway', doc: 'Kafka client id' }),
    groupId: text({ env: 'KAFKA_GROUP_ID', default: 'gateway-worker', doc: "the worker's consumer group" }),
    wireVersion: custom<1 | 2 | 3>({
      env: 'EVENT_WIRE_VERSION',
      defaultText: '`3`',
      parse: (raw) => {
        const v = raw.trim();
        if (v !== '1' && v !== '2' && v !== '3') throw new SettingError(`EVENT_WIRE_VERSION must be 1, 2 or 3, got "${raw}".`);
        return v === '1' ? 1 : v === '2' ? 2 : 3;
      },
      fallback: () => 3,
      doc: 'version of the Kafka messages this gateway writes: 3 Protocol Buffers, 2 binary, 1 JSON',
    }),
    securityProtocol: choice({
      env: 'KAFKA_SECURITY_PROTOCOL',
      default: 'PLAINTEXT',
      words: ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'],
      doc: "Kafka's security.protocol: TLS (SSL), SASL, both, or neither",
    }),
    saslMechanism: choice({ env: 'KAFKA_SASL_MECHANISM', default: 'SCRAM-SHA-512', words: ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'], doc: 'SASL mechanism with SASL_*' }),
    saslUsername: optional({ env: 'KAFKA_SASL_USERNAME', defaultText: '(none)', doc: 'SASL user (the principal the ACLs name)' }),
    saslPassword: optional({ env: 'KAFKA_SASL_PASSWORD', secret: true, defaultText: '(none)', doc: "that user's password" }),
    tlsCaFile: optional({ env: 'KAFKA_TLS_CA_FILE', defaultText: '(system CAs)', check: readableFile('KAFKA_TLS_CA_FILE'), doc: 'PEM CA that signed the brokers\' certificates' }),
    tlsCertFile: optional({ env: 'KAFKA_TLS_CERT_FILE', defaultText: '(none)', check: readableFile('KAFKA_TLS_CERT_FILE'), doc: 'PEM client certificate for mutual TLS' }),
    tlsKeyFile: optional({ env: 'KAFKA_TLS_KEY_FILE', defaultText: '(none)', check: readableFile('KAFKA_TLS_KEY_FILE'), doc: 'PEM key of KAFKA_TLS_CERT_FILE' }),
    producerLingerMs: whole({ env: 'PRODUCER_LINGER_MS', default: 2, tuning: true, doc: 'producer micro-batch: send this long after the first queued event' }),
    producerBatchEvents: whole({ env: 'PRODUCER_BATCH_EVENTS', default: 500, min: 1, tuning: true, doc: 'or when this many are queued' }),
    requestTimeoutMs: whole({
      env: 'KAFKA_REQUEST_TIMEOUT_MS',
      default: 5000,
      min: 100,
      doc: 'deadline of a Kafka request other than an event send (metadata, offsets, fetches, admin calls); the connections silent meanwhile are closed',
    }),
    connectTimeoutMs: whole({ env: 'KAFKA_CONNECT_TIMEOUT_MS', default: 1000, min: 100, doc: 'deadline of each connection to a broker' }),
    keepAliveMs: whole({ env: 'KAFKA_KEEPALIVE_MS', default: 5000, min: 1000, doc: 'idle time before the first TCP keep-alive probe on a Kafka connection' }),
  },
  /** ClickHouse: where the worker stores events and the admin API reads them. */
  clickhouse: {
    url: optional({ env: 'CLICKHOUSE_URL', defaultText: '(none)', check: httpUrl('CLICKHOUSE_URL'), show: maskUrlPassword, doc: 'ClickHouse HTTP URL' }),
    database: text({ env: 'CLICKHOUSE_DATABASE', default: 'gateway', doc: 'database the worker creates and migrates' }),
    user: text({ env: 'CLICKHOUSE_USER', default: 'default', doc: 'ClickHouse user' }),
    password: text({ env: 'CLICKHOUSE_PASSWORD', default: '', defaultText: 'empty', secret: true, doc: "that user's password" }),
    tlsCaFile: optional({ env: 'CLICKHOUSE_TLS_CA_FILE', defaultText: '(system CAs)', check: readableFile('CLICKHOUSE_TLS_CA_FILE'), doc: 'PEM CA that signed the ClickHouse certificate (https:// URLs)' }),
    retentionDays: whole({ env: 'CLICKHOUSE_RETENTION_DAYS', default: 0, doc: 'days events are kept (ClickHouse 24.8+); 0 keeps all' }),
    insertTimeoutMs: whole({
      env: 'CLICKHOUSE_INSERT_TIMEOUT_MS',
      default: 10_000,
      min: 100,
      doc: "the worker's requests: one silent this long is aborted and its connection closed (the insert is retried)",
    }),
    queryTimeoutMs: whole({ env: 'CLICKHOUSE_QUERY_TIMEOUT_MS', default: 3000, min: 100, doc: "the admin API's reads: one silent this long is aborted and its connection closed" }),
  },
  /** The Kafka → ClickHouse worker. */
  worker: {
    batchRows: whole({ env: 'WORKER_BATCH_ROWS', default: 20_000, min: 1, doc: "insert a partition's events when this many are buffered" }),
    batchMs: whole({ env: 'WORKER_BATCH_MS', default: 500, min: 1, doc: 'or when the oldest is this old' }),
    sessionTimeoutMs: whole({
      env: 'WORKER_SESSION_TIMEOUT_MS',
      default: 10_000,
      min: 6000,
      doc: "the worker's consumer-group session: a worker silent this long loses its partitions to the others",
    }),
  },
  /** Self-healing and its limit: every process. */
  health: {
    stuckExitMs: whole({
      env: 'STUCK_EXIT_SECONDS',
      default: 60,
      times: SECOND,
      doc: 'a component failing this long while its engine answers a fresh connection exits the process (code 1) for its supervisor to restart; 0 never',
    }),
  },
  log: {
    level: choice({ env: 'LOG_LEVEL', default: 'info', words: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], doc: 'pino level' }),
    format: choice({
      env: 'LOG_FORMAT',
      default: 'auto',
      words: ['auto', 'json', 'pretty'],
      doc: 'JSON lines, or one readable line per entry (pretty); auto: pretty on a terminal, JSON otherwise',
    }),
  },
} satisfies Record<string, Record<string, Setting<unknown>>>;
