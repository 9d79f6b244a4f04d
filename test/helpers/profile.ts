/**
 * A services profile other than the single one (SERVICES_PROFILE=ha, cluster): the settings its
 * `up.sh` wrote, and what the failure tests do to its nodes (kill -9, freeze, resume, start again).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

export type ProfileName = 'ha' | 'cluster';

/** `.services-<profile>.env` (or `fileOverride`) read as KEY=value; a missing file or key fails the suite. */
export function profileEnv<K extends string>(profile: ProfileName, keys: readonly K[], fileOverride?: string): Record<K, string> {
  const file = fileOverride ?? path.join(ROOT, `.services-${profile}.env`);
  if (!existsSync(file)) throw new Error(`${file} is missing: start the ${profile} profile with \`SERVICES_PROFILE=${profile} npm run services:up\`.`);
  const env: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) env[m[1]!] = m[2]!;
  }
  for (const k of keys) if (!env[k]) throw new Error(`${k} missing from ${file}`);
  return env;
}

/** Starts the profile, or the named nodes of it, through the services script (leaves running ones be). */
export function upProfile(profile: ProfileName, nodes: readonly string[] = [], options: { quiet?: boolean } = {}): void {
  execFileSync('bash', [path.join(ROOT, 'scripts/services/up.sh'), ...nodes], {
    cwd: ROOT,
    stdio: options.quiet === true ? 'pipe' : 'inherit',
    ...(options.quiet === true ? { timeout: 150_000 } : {}),
    env: { ...process.env, SERVICES_PROFILE: profile },
  });
}

/** Signals to a profile's nodes (redis-1, kafka-3, cluster-2 ...), by the pid files up.sh wrote in `servicesDir`. */
export function profileNodes(servicesDir: string): {
  nodePid: (node: string) => number;
  killNode: (node: string) => void;
  stallNode: (node: string) => void;
  resumeNode: (node: string) => void;
} {
  const nodePid = (node: string): number => Number(readFileSync(path.join(servicesDir, `${node}.pid`), 'utf8').trim());
  return {
    nodePid,
    killNode: (node) => process.kill(nodePid(node), 'SIGKILL'),
    // SIGSTOP: its connections stay open and nothing answers, as a VM frozen by its hypervisor or
    // a process in a long GC pause; resumeNode (SIGCONT) lets it go on.
    stallNode: (node) => process.kill(nodePid(node), 'SIGSTOP'),
    resumeNode: (node) => process.kill(nodePid(node), 'SIGCONT'),
  };
}
