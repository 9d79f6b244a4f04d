import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * Installs, when missing, the Debian programs a layer runs for real (scripts/services/tools.sh:
 * apt-get the way up.sh installs Redis and ClickHouse). A global setup file takes no arguments,
 * so each tool has a one-line setup file next to this one.
 */
export function installTools(...tools: string[]): void {
  const root = path.resolve(import.meta.dirname, '..', '..');
  execFileSync('bash', [path.join(root, 'scripts/services/tools.sh'), ...tools], { stdio: 'inherit', cwd: root });
}
