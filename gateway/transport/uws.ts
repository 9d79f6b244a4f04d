import { createRequire } from 'node:module';
import uWS from 'uWebSockets.js';

export { uWS };
export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';

/**
 * The package silently falls back to a slow node:http emulation when its native binary fails
 * to load. This returns the path of the loaded `.node` binary, or null when on the fallback.
 */
export function nativeBinaryPath(): string | null {
  const cache = createRequire(import.meta.url).cache;
  return Object.keys(cache).find((k) => /uws_[^/\\]+\.node$/.test(k)) ?? null;
}
