import fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import type { Logger } from '../../shared/runtime/logger.js';

/**
 * The operators' console on the admin port: index.html at `/`, its content-hashed script and
 * style sheet under `/console/`. These files hold no data, so they are served without the token;
 * everything the console shows comes from the token-protected API. Built by `npm run build`
 * (console/build.ts) into dist/console and read once, compressed, at start.
 */
const CONSOLE_PATH_PREFIX = '/console/';

/**
 * No inline script or style, nothing from elsewhere but the map's tiles (images from the origin of
 * CONSOLE_MAP_TILE_URL); the API is the page's own origin.
 */
export function consoleCsp(tileOrigin: string | null = null): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data:${tileOrigin === null ? '' : ` ${tileOrigin}`}`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Without a map tile origin (what the tests of the page's headers compare with). */
export const CONSOLE_CSP = consoleCsp();

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

interface Asset {
  contentType: string;
  cacheControl: string;
  identity: Buffer;
  /** Null until known: read from the build's `.gz`/`.br` files, else compressed in the background. */
  gzip: Buffer | null;
  br: Buffer | null;
  headers: Readonly<Record<string, string>>;
}

interface ConsoleAssets {
  /** Answers GET/HEAD of `/` and `/console/*` and returns true; false leaves the request to the API. */
  serve(req: IncomingMessage, res: ServerResponse): boolean;
}

/** dist/console of the package this file belongs to, whether it runs from source or from dist/. */
export function defaultConsoleDir(from = import.meta.dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'dist', 'console');
    if (path.dirname(dir) === dir) return path.join(from, 'console');
  }
}

/** A compressed copy the build wrote beside `file`, unless it is missing or older than the file. */
function prebuilt(file: string, suffix: '.gz' | '.br'): Buffer | null {
  try {
    const made = fs.statSync(file + suffix);
    return made.mtimeMs >= fs.statSync(file).mtimeMs ? fs.readFileSync(file + suffix) : null;
  } catch {
    return null;
  }
}

/**
 * The build compresses each asset once (console/build.ts: `.gz` at level 9, `.br` at quality 11,
 * the slowest settings). A console copied in without them is compressed here on
 * libuv's thread pool, never on the event loop, and served uncompressed until that is done.
 */
function load(file: string, name: string, csp: string): Asset {
  const identity = fs.readFileSync(file);
  const isPage = name === 'index.html';
  const asset: Asset = {
    contentType: CONTENT_TYPES[path.extname(name)] ?? 'application/octet-stream',
    // The page names the current hashed assets, so it is revalidated; a hashed asset never changes.
    cacheControl: isPage ? 'no-cache' : 'public, max-age=31536000, immutable',
    identity,
    gzip: prebuilt(file, '.gz'),
    br: prebuilt(file, '.br'),
    headers: isPage
      ? { 'Content-Security-Policy': csp, 'X-Frame-Options': 'DENY', 'Referrer-Policy': 'no-referrer' }
      : {},
  };
  if (asset.gzip === null) zlib.gzip(identity, GZIP_OPTIONS, (err, out) => (asset.gzip = err === null ? out : null));
  if (asset.br === null) zlib.brotliCompress(identity, brotliOptions(identity.length), (err, out) => (asset.br = err === null ? out : null));
  return asset;
}

export const GZIP_OPTIONS: zlib.ZlibOptions = { level: 9 };
export function brotliOptions(size: number): zlib.BrotliOptions {
  return { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: size } };
}

/** The encoding to send for an Accept-Encoding header: br, then gzip, else none (q=0 honoured). */
export function pickEncoding(acceptEncoding: string | undefined): 'br' | 'gzip' | null {
  const accepted = new Set<string>();
  for (const part of (acceptEncoding ?? '').split(',')) {
    const [coding = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q !== undefined && Number(q.slice(2)) === 0) continue;
    accepted.add(coding.trim());
  }
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip') || accepted.has('*')) return 'gzip';
  return null;
}

/** The chosen encoding if its copy is ready, else none (the identity bytes are always there). */
function available(asset: Asset, chosen: 'br' | 'gzip' | null): 'br' | 'gzip' | null {
  if (chosen === 'br') return asset.br !== null ? 'br' : null;
  if (chosen === 'gzip') return asset.gzip !== null ? 'gzip' : null;
  return null;
}

/** `tileUrl`: the map's tile template, whose origin the page may load images from. */
export function loadConsoleAssets(logger: Logger, dir = defaultConsoleDir(), tileUrl: string | null = null): ConsoleAssets {
  const csp = consoleCsp(tileUrl === null ? null : new URL(tileUrl).origin);
  const assets = new Map<string, Asset>();
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir).filter((name) => CONTENT_TYPES[path.extname(name)] !== undefined);
  } catch {
    // Not built: the API works without it; `/` says how to get it.
  }
  for (const name of names) assets.set(name, load(path.join(dir, name), name, csp));
  if (!assets.has('index.html')) logger.warn({ dir }, 'admin: the console is not built (npm run build); / answers 404');

  return {
    serve(req, res) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return false;
      const rawUrl = req.url ?? '/';
      const q = rawUrl.indexOf('?');
      const rawPath = q < 0 ? rawUrl : rawUrl.slice(0, q);
      let name: string;
      if (rawPath === '/') name = 'index.html';
      else if (rawPath.startsWith(CONSOLE_PATH_PREFIX)) name = rawPath.slice(CONSOLE_PATH_PREFIX.length);
      else return false;

      // Only the files read at start, by exact name; the page has one URL, `/`.
      const asset = name.includes('/') || (name === 'index.html' && rawPath !== '/') ? undefined : assets.get(name);
      if (asset === undefined) {
        const text = rawPath === '/' ? 'The operators console is not built: run `npm run build`.\n' : 'Not found.\n';
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
        res.end(req.method === 'HEAD' ? undefined : text);
        return true;
      }
      const encoding = available(asset, pickEncoding(req.headers['accept-encoding']));
      const body = encoding === 'br' ? asset.br! : encoding === 'gzip' ? asset.gzip! : asset.identity;
      res.writeHead(200, {
        ...asset.headers,
        'Content-Type': asset.contentType,
        'Content-Length': body.length,
        'Cache-Control': asset.cacheControl,
        'X-Content-Type-Options': 'nosniff',
        Vary: 'Accept-Encoding',
        ...(encoding === null ? {} : { 'Content-Encoding': encoding }),
      });
      res.end(req.method === 'HEAD' ? undefined : body);
      return true;
    },
  };
}
