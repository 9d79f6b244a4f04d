/**
 * Where the compiled peers live and what a peer build needs from the machine. Peers are built on
 * demand by the bench (never at `npm install`) into
 * `${XDG_CACHE_HOME:-~/.cache}/prestadores-gateway/peers/<name>-<hash of every input>`, so a change
 * to the WSDL, the peer's sources or the toolchain builds a new one and an unchanged peer is reused.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { renderWsdl } from '../../gateway/metadata/wsdl.js';

export const PEERS_CACHE = path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'prestadores-gateway', 'peers');

/**
 * Our WSDL as the gateway serves it at `?wsdl` (rendered by the gateway's own code). The address
 * inside is fixed so the hash only changes with the contract; the peers listen where they are told.
 */
export const peerWsdl = (): string => renderWsdl({ namespace: 'http://tempuri.org/', serviceUrl: 'http://127.0.0.1/service.asmx' });

export function hashOf(parts: (string | Buffer)[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(createHash('sha256').update(p).digest());
  return h.digest('hex').slice(0, 16);
}

/**
 * The cached build directory `<name>-<hash>`, built by `build(dir)` when absent. The build runs in
 * a temporary sibling that is renamed into place only when it succeeded, so a failed or
 * interrupted build never leaves a directory that looks finished.
 */
export async function cachedBuild(name: string, hash: string, build: (dir: string) => Promise<void>): Promise<{ dir: string; built: boolean }> {
  const dir = path.join(PEERS_CACHE, `${name}-${hash}`);
  if (existsSync(dir)) return { dir, built: false };
  mkdirSync(PEERS_CACHE, { recursive: true });
  const tmp = `${dir}.building-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp);
  try {
    await build(tmp);
    renameSync(tmp, dir);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  // Earlier builds of this peer (other inputs) are not needed any more.
  for (const old of readdirSync(PEERS_CACHE)) {
    if (old.startsWith(`${name}-`) && !old.includes('.building-') && path.join(PEERS_CACHE, old) !== dir) rmSync(path.join(PEERS_CACHE, old), { recursive: true, force: true });
  }
  return { dir, built: true };
}

/** The first line a command prints for its version (stdout or stderr), or '' if it is missing. */
export function versionOf(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).split('\n')[0]!.trim();
  } catch (err) {
    const e = err as { stdout?: unknown; stderr?: unknown; code?: unknown };
    if (e.code === 'ENOENT') return '';
    const text = `${typeof e.stdout === 'string' ? e.stdout : ''}${typeof e.stderr === 'string' ? e.stderr : ''}`;
    return text.split('\n')[0]?.trim() ?? '';
  }
}

/**
 * Installs Debian packages a peer needs, only when `missing()` says so and only while the bench
 * runs (as root, as on the project's machines; otherwise it says what to install).
 */
export function ensureDebianPackages(packages: string[], missing: () => boolean, log: (msg: string) => void): void {
  if (!missing()) return;
  if (process.getuid?.() !== 0) throw new Error(`missing: install the Debian packages ${packages.join(' ')} (apt-get install -y ${packages.join(' ')})`);
  log(`installing ${packages.join(' ')} (apt-get)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['install', '-y', '-qq', ...packages], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  } catch {
    // The package lists may be missing or stale on a fresh machine.
    execFileSync('apt-get', ['update', '-qq'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
    execFileSync('apt-get', ['install', '-y', '-qq', ...packages], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  if (missing()) throw new Error(`still missing after apt-get install ${packages.join(' ')}`);
}
