import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import proxyaddr from 'proxy-addr';
import { custom, maskUrlPassword, SettingError, type Setting } from './kinds.js';
import { errorMessage } from '../util/error-message.js';

/*
 * The values of settings.ts that need more than a kind's bounds: lists, addresses, paths, URLs and
 * files, each checked with a message that names its variable, plus the defaults computed from the
 * machine.
 */

/**
 * GATEWAY_THREADS when unset: a front-end thread per core but one, at least one. The process needs
 * more than its front ends (the SQLite writer thread, V8's GC helpers, the kernel's network work);
 * on 2 cores one thread served more than two (bench/RESULTS.md §GATEWAY_THREADS).
 */
export function defaultGatewayThreads(cores: number = os.availableParallelism()): number {
  return Math.max(1, cores - 1);
}

export function isValidTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** A Sentinel's or a cluster node's address. */
export interface RedisNodeAddress {
  host: string;
  port: number;
}

export const commaList = (raw: string): string[] =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

/** REDIS_SENTINELS, REDIS_CLUSTER_NODES: `host:port,host:port,...` (IPv6 hosts in brackets). */
export function nodeAddresses(env: string): (raw: string) => RedisNodeAddress[] | null {
  return (raw) => {
    const list = commaList(raw).map((a) => {
      const m = /^(\[[^\]]+\]|[^:\s]+):(\d{1,5})$/.exec(a);
      const port = m === null ? NaN : Number(m[2]);
      if (m === null || port < 1 || port > 65535) throw new SettingError(`${env} must be host:port,host:port,...; "${a}" is not host:port.`);
      return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
    });
    return list.length === 0 ? null : list;
  };
}

/** REDIS_KEY_PREFIX: a brace would become every key's hash tag and put every key in one Redis Cluster slot. */
export function redisKeyPrefix(raw: string): string {
  if (/[{}]/.test(raw)) throw new SettingError(`REDIS_KEY_PREFIX must not contain { or } (Redis Cluster reads them as a hash tag), got "${raw}".`);
  return raw;
}

export function servicePath(raw: string): string {
  let p = raw.startsWith('/') ? raw : `/${raw}`;
  p = p.replace(/\/+$/, '');
  if (p === '') throw new SettingError('SERVICE_PATH must not be empty.');
  return p;
}

export function trustedProxies(raw: string): string[] {
  const list = commaList(raw).filter((p) => p !== 'none');
  try {
    proxyaddr.compile(list);
  } catch (err) {
    throw new SettingError(`TRUSTED_PROXIES: ${errorMessage(err)}`);
  }
  return list;
}

/** An http(s) template with {z}, {x} and {y}, and a plain host (no {s}): its origin goes into a CSP. */
export function mapTileUrl(raw: string): string {
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    // Reported below.
  }
  const placeholders = ['{z}', '{x}', '{y}'].every((p) => raw.includes(p));
  if (url === null || !/^https?:$/.test(url.protocol) || /[{}%]/.test(url.host) || !placeholders) {
    throw new SettingError(`CONSOLE_MAP_TILE_URL must be an http(s) URL with {z}, {x} and {y} and a plain host, got "${raw}".`);
  }
  return raw;
}

export function httpUrl(env: string): (raw: string) => string {
  return (raw) => {
    const url = raw.replace(/\/+$/, '');
    if (!/^https?:\/\/[^/]+/.test(url)) throw new SettingError(`${env} must be an http(s) URL, got "${maskUrlPassword(url)}".`);
    return url;
  };
}

/** A file the process must read at start (a certificate, a key, a CA): its absolute path, checked readable now. */
export function readableFile(env: string): (raw: string) => string {
  return (raw) => {
    const file = path.resolve(raw);
    try {
      fs.accessSync(file, fs.constants.R_OK);
    } catch (err) {
      throw new SettingError(`${env}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'}).`);
    }
    return file;
  };
}

/** An optional port (null: off). */
export function optionalPort(c: { env: string; doc: string; defaultText: string }): Setting<number | null> {
  return custom<number | null>({
    env: c.env,
    defaultText: c.defaultText,
    parse: (raw) => {
      const n = Number(raw.trim());
      if (!/^\d+$/.test(raw.trim()) || n < 1 || n > 65535) throw new SettingError(`${c.env} must be a port (1-65535), got "${raw}".`);
      return n;
    },
    fallback: () => null,
    show: (v) => (v === null ? '(off)' : String(v)),
    doc: c.doc,
  });
}
