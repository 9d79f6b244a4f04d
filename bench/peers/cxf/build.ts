/**
 * Builds the Apache CXF peer (bench/peers/cxf: pom.xml and src/) from our WSDL, on demand and
 * cached: the project is copied into the cache directory, the WSDL written into its resources, and built with
 * `mvn -q -B package` (cxf-codegen-plugin's wsdl2java -server -impl, then our class; Maven Central
 * only, through ~/.m2). The runtime classpath is target/cxf-peer-1.jar plus target/lib/*. Maven and
 * a JDK are installed from Debian when missing.
 *
 * Run alone: npx tsx bench/peers/cxf/build.ts   (prints the java command line)
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { cachedBuild, ensureDebianPackages, hashOf, peerWsdl, versionOf } from '../cache.js';
import { errorMessage } from '../../../shared/util/error-message.js';

const PROJECT = import.meta.dirname;
const MAIN_CLASS = 'bench.peer.CounterPeer';

/** Every file of the Maven project (pom.xml and src/), in a stable order, for the cache hash. */
function projectFiles(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(path.join(dir, rel)).sort()) {
    const r = path.join(rel, name);
    if (rel === '' && name !== 'pom.xml' && name !== 'src') continue;
    if (statSync(path.join(dir, r)).isDirectory()) out.push(...projectFiles(dir, r));
    else out.push(r);
  }
  return out;
}

const installed = (): boolean => versionOf('mvn', ['-v']) !== '' && versionOf('javac', ['-version']) !== '';

/** `java` arguments that run the peer (append the credentials). */
export async function buildCxfPeer(log: (msg: string) => void): Promise<string[]> {
  ensureDebianPackages(['maven', 'openjdk-17-jdk-headless'], () => !installed(), log);
  const wsdl = peerWsdl();
  const files = projectFiles(PROJECT);
  const hash = hashOf([wsdl, ...files.flatMap((f) => [f, readFileSync(path.join(PROJECT, f))]), versionOf('mvn', ['-v']), versionOf('javac', ['-version'])]);
  const { dir, built } = await cachedBuild('cxf', hash, async (tmp) => {
    log(`building the CXF peer (mvn package: wsdl2java -server, Jetty transport) in ${tmp}; the first build downloads its dependencies from Maven Central`);
    cpSync(path.join(PROJECT, 'pom.xml'), path.join(tmp, 'pom.xml'));
    cpSync(path.join(PROJECT, 'src'), path.join(tmp, 'src'), { recursive: true });
    mkdirSync(path.join(tmp, 'src', 'main', 'resources', 'wsdl'), { recursive: true });
    writeFileSync(path.join(tmp, 'src', 'main', 'resources', 'wsdl', 'service.wsdl'), wsdl);
    try {
      await promisify(execFile)('mvn', ['-q', '-B', 'package'], { cwd: tmp, maxBuffer: 64 * 2 ** 20, timeout: 20 * 60_000 });
    } catch (err) {
      // execFile's error carries the child's output (text: no `encoding: 'buffer'` asked for).
      const stdout = typeof err === 'object' && err !== null && 'stdout' in err && typeof err.stdout === 'string' ? err.stdout : '';
      const stderr = typeof err === 'object' && err !== null && 'stderr' in err && typeof err.stderr === 'string' ? err.stderr : '';
      const message = errorMessage(err);
      throw new Error(`mvn package failed: ${message}\n${stdout.slice(-3000)}${stderr.slice(-2000)}`, { cause: err });
    }
  });
  if (!built) log(`CXF peer from the cache: ${dir}`);
  const classpath = [path.join(dir, 'target', 'cxf-peer-1.jar'), path.join(dir, 'target', 'lib', '*')].join(':');
  // slf4j-simple at warn: Jetty's and CXF's start-up chatter off, their warnings and errors kept.
  return ['-Dorg.slf4j.simpleLogger.defaultLogLevel=warn', '-cp', classpath, MAIN_CLASS];
}

if (process.argv[1] === import.meta.filename) {
  console.log(['java', ...(await buildCxfPeer((msg) => process.stderr.write(`${msg}\n`)))].join(' '));
}
