import { installTools } from './debian-tools.js';

/** What the docs' commands run (test/embedded/docs-*.embedded.test.ts): curl for the walkthrough, sqlite3 for the analysts' queries. */
export default function setup(): void {
  installTools('curl', 'sqlite3');
}
