/**
 * Builds the gSOAP peer (bench/peers/gsoap/server.cpp) from our WSDL, on demand and cached:
 *
 *   wsdl2h -o service.h service.wsdl          the WSDL's SOAP bindings as one gSOAP service
 *   soapcpp2 -1 -j -S -L -x service.h         SOAP 1.1 server-side C++ service class only
 *   g++ -O2 server.cpp soapServiceSoapService.cpp soapC.cpp -lgsoap++ -lsqlite3
 *
 * `-1` makes the service speak SOAP 1.1 (text/xml answers): without it wsdl2h's merged 1.1/1.2
 * service answers a SOAP 1.1 request with a SOAP 1.2 Content-Type. WITH_DEFAULT_VIRTUAL gives the
 * operations the peer does not implement a body that answers "no method". The Debian packages
 * (gsoap: wsdl2h, soapcpp2; libgsoap-dev: stdsoap2.h, libgsoap++; libsqlite3-dev for the durable
 * variant; g++) are installed when missing.
 *
 * Run alone: npx tsx bench/peers/gsoap/build.ts   (prints the binary's path)
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cachedBuild, ensureDebianPackages, hashOf, peerWsdl, versionOf } from '../cache.js';

const SOURCE = path.join(import.meta.dirname, 'server.cpp');
/** The flags libgsoap++ was compiled with on Debian (its pkg-config Cflags), plus ours. */
const CXXFLAGS = ['-O2', '-std=c++17', '-DWITH_IPV6', '-DWITH_DOM', '-DWITH_DEFAULT_VIRTUAL'];
export const GSOAP_BINARY = 'gsoap-peer';

const installed = (): boolean =>
  versionOf('wsdl2h', ['-V']) !== '' && versionOf('soapcpp2', ['-V']) !== '' && versionOf('g++', ['--version']) !== '' && existsSync('/usr/include/stdsoap2.h') && existsSync('/usr/include/sqlite3.h');

/** The peer's binary, built if the cache has none for these inputs. */
export async function buildGsoapPeer(log: (msg: string) => void): Promise<string> {
  ensureDebianPackages(['gsoap', 'libgsoap-dev', 'libsqlite3-dev', 'g++'], () => !installed(), log);
  const wsdl = peerWsdl();
  const source = readFileSync(SOURCE);
  const toolchain = [versionOf('soapcpp2', ['-V']), versionOf('g++', ['--version']), versionOf('dpkg-query', ['-W', '-f=${Version}', 'libgsoap-dev']), versionOf('dpkg-query', ['-W', '-f=${Version}', 'libsqlite3-dev'])].join('|');
  const hash = hashOf([wsdl, source, CXXFLAGS.join(' '), toolchain]);
  const { dir, built } = await cachedBuild('gsoap', hash, async (tmp) => {
    log(`building the gSOAP peer (wsdl2h, soapcpp2, g++ -O2) in ${tmp}`);
    const run = (cmd: string, args: string[]): void => {
      execFileSync(cmd, args, { cwd: tmp, stdio: ['ignore', 'ignore', 'pipe'] });
    };
    writeFileSync(path.join(tmp, 'service.wsdl'), wsdl);
    copyFileSync(SOURCE, path.join(tmp, 'server.cpp'));
    run('wsdl2h', ['-o', 'service.h', 'service.wsdl']);
    run('soapcpp2', ['-1', '-j', '-S', '-L', '-x', '-I/usr/share/gsoap/import', 'service.h']);
    run('g++', [...CXXFLAGS, '-I.', '-o', GSOAP_BINARY, 'server.cpp', 'soapServiceSoapService.cpp', 'soapC.cpp', '-lgsoap++', '-lsqlite3', '-lpthread']);
  });
  if (!built) log(`gSOAP peer from the cache: ${dir}`);
  return path.join(dir, GSOAP_BINARY);
}

if (process.argv[1] === import.meta.filename) {
  console.log(await buildGsoapPeer((msg) => process.stderr.write(`${msg}\n`)));
}
