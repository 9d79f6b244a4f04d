import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import tls from 'node:tls';
import type { Config } from '../../config/index.js';
import { ClickHouseLogLevel, createClient, type ClickHouseClient, type ClickHouseClientConfigOptions } from '@clickhouse/client';

export type { ClickHouseClient };

export interface ClickHouseOptions {
  url: string;
  database: string;
  username: string;
  password: string;
  /** PEM of the CA that signed an https:// server's certificate (else the system's). */
  tlsCa?: Buffer;
  /** Per request; an insert of a whole batch must fit. Default 30 s. */
  requestTimeoutMs?: number;
  /**
   * Another transport than HTTP to `url`: the tests and benches pass chdb's in-process engine
   * (`createChdbConnection` of npm `chdb`), the only current ClickHouse that runs on these machines.
   */
  connection?: ClickHouseClientConfigOptions['connection'];
}

/**
 * The request timeout of a client for migration statements that copy data (a month of events in
 * 18.16's migration 3): an hour, as long as the largest month should take; 18.16 finishes such a
 * statement even when the client stops waiting, so this bounds only how long a run waits for it.
 */
export const LONG_STATEMENT_TIMEOUT_MS = 3_600_000;

/**
 * A client usable against ClickHouse 18.16 and current releases alike. It is created without a
 * default database (the database may not exist yet when migrations run), so every statement names
 * its tables as `db`.`table`. 64-bit integers are asked for as quoted text explicitly (18.16 and
 * current releases agree on that, and JSON numbers lose precision past 2^53).
 */
export function createClickHouseClient(options: ClickHouseOptions): ClickHouseClient {
  return createClient({
    url: options.url,
    username: options.username,
    password: options.password,
    request_timeout: options.requestTimeoutMs ?? 30_000,
    ...(options.tlsCa === undefined ? {} : { tls: { ca_cert: options.tlsCa } }),
    ...(options.connection === undefined ? {} : { connection: options.connection }),
    // The client's own logger prints every failed request with a stack; the worker logs failures itself.
    log: { level: ClickHouseLogLevel.OFF },
    clickhouse_settings: {
      output_format_json_quote_64bit_integers: 1,
    },
  });
}

/** The client options of a configuration (CLICKHOUSE_URL set): URL, database, user, password, CA. */
export function clickHouseOptionsFromConfig(clickhouse: Config['clickhouse'] & { url: string }): ClickHouseOptions {
  return {
    url: clickhouse.url,
    database: clickhouse.database,
    username: clickhouse.user,
    password: clickhouse.password,
    ...(clickhouse.tlsCaFile === null ? {} : { tlsCa: readFileSync(clickhouse.tlsCaFile) }),
  };
}

/**
 * Failures no retry mends: a wrong password or unknown user (ClickHouse 18.16: codes 192-194, current
 * releases: 516 AUTHENTICATION_FAILED), a certificate the client does not trust or that expired, a
 * server that does not speak TLS. The worker stops on them at once instead of retrying for a minute.
 */
export function isPermanentClickHouseError(err: unknown): boolean {
  const text = err instanceof Error ? `${err.message} ${(err as NodeJS.ErrnoException).code ?? ''}` : String(err);
  return /Code: (192|193|194|516)\b|AUTHENTICATION_FAILED|Authentication failed|password is incorrect|Wrong password|Unknown user|UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT|CERT_HAS_EXPIRED|DEPTH_ZERO_SELF_SIGNED_CERT|ERR_SSL_|EPROTO|certificate/i.test(text);
}

/**
 * An insert that got no answer in time: the client's request timeout (`Timeout error.`), a socket
 * timeout, or the server's own limit (code 159, TIMEOUT_EXCEEDED). ClickHouse answers, slowly.
 */
export function isInsertTimeout(err: unknown): boolean {
  const text = err instanceof Error ? `${err.message} ${(err as NodeJS.ErrnoException).code ?? ''}` : String(err);
  return /Timeout error|ETIMEDOUT|Code: 159\b|TIMEOUT_EXCEEDED/i.test(text);
}

/** Whether ClickHouse answers a ping from a client made for this question alone (the stuck watchdog's check). */
export async function clickhouseAnswers(options: ClickHouseOptions): Promise<boolean> {
  const client = createClickHouseClient({ ...options, requestTimeoutMs: 3000 });
  try {
    return (await client.ping()).success;
  } catch {
    return false;
  } finally {
    await client.close().catch(() => undefined);
  }
}

/**
 * A plaintext `http://` URL aimed at ClickHouse's HTTPS port: the server drops each request the way
 * a restarting server does, so the error alone cannot tell the two apart. This asks the port for a
 * TLS handshake (the certificate is not checked: only whether the port speaks TLS) and, when it
 * answers, names the mistake so the caller can stop at once instead of retrying for its start window.
 */
export async function plaintextOnTlsPort(url: string, err: unknown, timeoutMs = 2000): Promise<Error | null> {
  const target = new URL(url);
  const code = (err as NodeJS.ErrnoException | null)?.code ?? '';
  const dropped = code === 'ECONNRESET' || /socket hang up|ECONNRESET|other side closed/i.test(err instanceof Error ? err.message : '');
  if (target.protocol !== 'http:' || !dropped) return null;
  const speaksTls = await new Promise<boolean>((resolve) => {
    const host = target.hostname.replace(/^\[|\]$/g, '');
    const socket = tls.connect({ host, port: Number(target.port || 80), ...(isIP(host) === 0 ? { servername: host } : {}), rejectUnauthorized: false, timeout: timeoutMs });
    const done = (answer: boolean): void => {
      socket.destroy();
      resolve(answer);
    };
    socket.once('secureConnect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
  // EPROTO, as Node.js names a protocol mismatch: isPermanentClickHouseError stops on it.
  return speaksTls ? Object.assign(new Error(`${target.host} speaks TLS and closed a plaintext request: use https:// in CLICKHOUSE_URL`), { code: 'EPROTO' }) : null;
}
