import { createRequire } from 'node:module';
import uWS from 'uWebSockets.js';

export { uWS };
export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';

/**
 * The path of the loaded native `.node` binary, or null when none is. The build we use throws when
 * its binary cannot load (an older one fell back to a slow node:http emulation with only a
 * warning); the tests assert the native path on every front-end thread all the same.
 */
export function nativeBinaryPath(): string | null {
  const cache = createRequire(import.meta.url).cache;
  return Object.keys(cache).find((k) => /uws_[^/\\]+\.node$/.test(k)) ?? null;
}
