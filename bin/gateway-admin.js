#!/usr/bin/env node
// `npx gateway-admin <command>`: the operators' CLI (cli/admin.ts) with nothing of npm's own on
// stdout (`npm run admin` prints its banner there), so `npx gateway-admin token create ana --role
// operator > ana.token` writes the token alone. Runs the sources through tsx where it is installed
// (a checkout), else the build in dist/ (an image pruned of development packages).
import path from 'node:path';
import { pathToFileURL } from 'node:url';

let tsx = null;
try {
  tsx = import.meta.resolve('tsx/esm/api');
} catch {
  // Not installed: the build.
}
/** @param {string} file */
const entry = (file) => pathToFileURL(path.join(import.meta.dirname, file)).href;
if (tsx === null) {
  await import(entry('../dist/cli/admin.js'));
} else {
  /** @type {{ register(): void }} */
  const api = await import(tsx);
  api.register();
  await import(entry('../cli/admin.ts'));
}
