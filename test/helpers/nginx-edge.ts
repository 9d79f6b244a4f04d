import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './spawned.js';

/** The shipped edge configuration (deploy/nginx/). */
export const EDGE_CONFIG_DIR = path.resolve(import.meta.dirname, '../../deploy/nginx');
const NGINX_CANDIDATES = ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx'];
/** Where Debian's nginx and libnginx-mod-http-js put the dynamic modules. */
const DEBIAN_MODULES_DIR = '/usr/lib/nginx/modules';
const INSTALL_HINT = 'install Debian\'s nginx: apt-get install nginx libnginx-mod-http-js';

function nginxBinary(): string {
  const found = [process.env.NGINX_BIN, ...NGINX_CANDIDATES].find((p): p is string => p !== undefined && existsSync(p));
  if (found === undefined) throw new Error(`nginx is not installed (looked for ${NGINX_CANDIDATES.join(', ')}): ${INSTALL_HINT}`);
  if (!existsSync(path.join(DEBIAN_MODULES_DIR, 'ngx_http_js_module.so'))) {
    throw new Error(`the nginx njs module is not installed (${DEBIAN_MODULES_DIR}/ngx_http_js_module.so): ${INSTALL_HINT}`);
  }
  return found;
}

/** Replaces `pattern` in `text`, insisting it matched (the shipped file must not drift silently). */
function replaceOrFail(text: string, pattern: RegExp, replacement: string, what: string): string {
  if (text.search(pattern) < 0) throw new Error(`deploy/nginx: ${what} not found (pattern ${pattern})`);
  return text.replace(pattern, replacement);
}


function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/**
 * Debian's nginx as a plain child process (no daemon, no system paths) running the shipped
 * deploy/nginx configuration in front of the given gateway ports. Only what cannot stay as
 * shipped is changed: the listen address, the upstream `server` lines, the log and temp paths.
 */
/** HTTPS on the edge: the shipped tls.conf with these files and a free port. */
export interface EdgeTls {
  certFile: string;
  keyFile: string;
}

export class NginxEdge {
  private stderr = '';
  /** The HTTPS port (tls.conf), or null when started without TLS. */
  tlsPort: number | null = null;

  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly proc: ChildProcess,
  ) {
    proc.stderr?.on('data', (d: Buffer) => (this.stderr += d.toString()));
  }

  static async start(gatewayPorts: readonly number[], tls?: EdgeTls): Promise<NginxEdge> {
    const bin = nginxBinary();
    const dir = mkdtempSync(path.join(tmpdir(), 'gw-edge-'));
    // nginx's workers run as www-data when the tests run as root: they must reach the temp dirs.
    chmodSync(dir, 0o755);
    for (const sub of ['conf', 'logs', 'temp']) mkdirSync(path.join(dir, sub));
    symlinkSync(DEBIAN_MODULES_DIR, path.join(dir, 'modules'));
    copyFileSync(path.join(EDGE_CONFIG_DIR, 'header-limit.js'), path.join(dir, 'conf', 'header-limit.js'));

    let upstreams = readFileSync(path.join(EDGE_CONFIG_DIR, 'gateways.conf'), 'utf8');
    upstreams = replaceOrFail(upstreams, /^\s*#?\s*server\s+[^;]+;[^\n]*\n/gm, '', 'upstream server lines');
    const servers = gatewayPorts.map((p) => `    server 127.0.0.1:${p} max_fails=3 fail_timeout=5s;\n`).join('');
    upstreams = replaceOrFail(upstreams, /(upstream gateway \{\n)/, `$1${servers}`, 'upstream gateway block');
    writeFileSync(path.join(dir, 'conf', 'gateways.conf'), upstreams);

    const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
      .map((k) => `    ${k}_temp_path ${path.join(dir, 'temp', k)};\n`)
      .join('');
    let lastError: Error | null = null;
    for (let attempt = 0; attempt < 3; attempt++) {
      const port = await freePort();
      const tlsPort = tls === undefined ? null : await freePort();
      let tlsConf = readFileSync(path.join(EDGE_CONFIG_DIR, 'tls.conf'), 'utf8');
      if (tls === undefined || tlsPort === null) tlsConf = '';
      else {
        tlsConf = replaceOrFail(tlsConf, /\blisten 443 ssl;/, `listen 127.0.0.1:${tlsPort} ssl;`, 'listen 443 ssl');
        tlsConf = replaceOrFail(tlsConf, /\/etc\/nginx\/tls\/server\.pem/, tls.certFile, 'ssl_certificate');
        tlsConf = replaceOrFail(tlsConf, /\/etc\/nginx\/tls\/server\.key/, tls.keyFile, 'ssl_certificate_key');
      }
      writeFileSync(path.join(dir, 'conf', 'tls.conf'), tlsConf);
      let main = readFileSync(path.join(EDGE_CONFIG_DIR, 'nginx.conf'), 'utf8');
      main = replaceOrFail(main, /\blisten 80;/, `listen 127.0.0.1:${port};`, 'listen 80');
      main = replaceOrFail(main, /\/var\/log\/nginx\//g, `${path.join(dir, 'logs')}/`, 'log paths');
      main = replaceOrFail(main, /(\nhttp \{\n)/, `$1${temp}`, 'http block');
      writeFileSync(path.join(dir, 'conf', 'nginx.conf'), main);

      const proc = spawn(bin, ['-p', `${dir}/`, '-c', 'conf/nginx.conf', '-e', 'logs/error.log', '-g', `daemon off; pid ${dir}/nginx.pid;`], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      const edge = new NginxEdge(port, dir, proc);
      const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      let running = true;
      void exited.then(() => (running = false));
      const deadline = Date.now() + 10_000;
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the exit handler clears it while the loop awaits
      while (running && Date.now() < deadline) {
        if (await accepts(port)) {
          edge.tlsPort = tlsPort;
          return edge;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the exit handler may have cleared it during the loop's awaits
      if (running) proc.kill('SIGKILL');
      await exited;
      lastError = new Error(`nginx did not start on port ${port}: ${edge.stderr.trim()} ${edge.errorLog().trim()}`);
      // Another process may have taken the free port in between: try another one.
      if (!/Address already in use/.test(lastError.message)) break;
    }
    rmSync(dir, { recursive: true, force: true });
    throw lastError ?? new Error('nginx did not start');
  }

  errorLog(): string {
    const file = path.join(this.dir, 'logs', 'error.log');
    return existsSync(file) ? readFileSync(file, 'utf8') : '';
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      const exited = new Promise<void>((resolve) => this.proc.once('exit', () => resolve()));
      this.proc.kill('SIGTERM');
      const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
