import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { installTools } from './debian-tools.js';

/**
 * The secure layer: openssl, nginx and the Python venv with zeep (tools.sh), then the engines in their secure forms
 * (SERVICES_PROFILE=secure scripts/services/up.sh: a private CA, TLS and users everywhere).
 * Idempotent; they are left running for the next run (`SERVICES_PROFILE=secure npm run services:down`).
 */
export default function setup(): void {
  const root = path.resolve(import.meta.dirname, '..', '..');
  installTools('openssl', 'nginx', 'python');
  execFileSync('bash', [path.join(root, 'scripts/services/up.sh')], { stdio: 'inherit', cwd: root, env: { ...process.env, SERVICES_PROFILE: 'secure' } });
}
