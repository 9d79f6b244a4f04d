import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
const run = promisify(execFile);

export interface CliResult {
  code: number;
  out: string;
  err: string;
}

/** Runs the operators' CLI against an admin server; resolves with its exit code and output (never rejects on a non-zero exit). */
export async function runAdminCli(adminUrl: string, token: string, args: readonly string[]): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(TSX, ['cli/admin.ts', '--json', '--url', adminUrl, '--token', token, ...args], { cwd: ROOT });
    return { code: 0, out: stdout, err: stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: x.code ?? -1, out: x.stdout ?? '', err: x.stderr ?? '' };
  }
}
