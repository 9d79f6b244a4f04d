/**
 * Throwaway Redis servers for the benches: a Redis Cluster of N primaries (no replicas), each node a
 * redis-server with cluster-enabled in a temporary directory, its slots assigned evenly by CLUSTER
 * ADDSLOTSRANGE (a one-node cluster holds all 16384). Debian's redis-server, as scripts/services
 * installs it. Nothing persisted; stop() kills the nodes and removes the directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';

export interface BenchCluster {
  nodes: { host: string; port: number; pid: number }[];
  stop(): Promise<void>;
}

async function answers(port: number): Promise<boolean> {
  const c = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  c.on('error', () => undefined);
  try {
    await c.connect();
    await c.ping();
    return true;
  } catch {
    return false;
  } finally {
    c.disconnect();
  }
}

/** `primaries` nodes on basePort.., their buses on basePort+10.. (below 32768, outside the ephemeral range). */
export async function startBenchCluster(primaries: number, basePort: number): Promise<BenchCluster> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-redis-cluster-'));
  const children: ChildProcess[] = [];
  const stop = async (): Promise<void> => {
    for (const child of children) child.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    return await form(primaries, basePort, dir, children, stop);
  } catch (err) {
    await stop();
    throw err;
  }
}

async function form(primaries: number, basePort: number, dir: string, children: ChildProcess[], stop: () => Promise<void>): Promise<BenchCluster> {
  const ports = Array.from({ length: primaries }, (_, i) => basePort + i);
  for (const port of ports) {
    const conf = path.join(dir, `${port}.conf`);
    writeFileSync(
      conf,
      [`port ${port}`, 'bind 127.0.0.1', `dir ${dir}`, `dbfilename ${port}.rdb`, 'save ""', 'appendonly no', 'cluster-enabled yes', 'cluster-announce-ip 127.0.0.1', `cluster-config-file ${port}-nodes.conf`, `cluster-port ${port + 10}`, 'cluster-node-timeout 5000'].join('\n'),
    );
    children.push(spawn('redis-server', [conf], { stdio: 'ignore' }));
  }
  for (const port of ports) {
    for (let i = 0; !(await answers(port)); i++) {
      if (i > 100) throw new Error(`bench Redis node ${port} did not start`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const clients = ports.map((port) => new Redis({ port, host: '127.0.0.1' }));
  // Even slot ranges, then every node meets the first.
  const per = Math.ceil(16384 / primaries);
  await Promise.all(clients.map((c, i) => c.call('CLUSTER', 'ADDSLOTSRANGE', String(i * per), String(Math.min(16383, (i + 1) * per - 1)))));
  // The bus port too: it is not the default port+10000 here.
  for (const c of clients.slice(1)) await c.call('CLUSTER', 'MEET', '127.0.0.1', String(ports[0]), String(ports[0]! + 10));
  for (let i = 0; ; i++) {
    const states = await Promise.all(clients.map((c) => c.call('CLUSTER', 'INFO') as Promise<string>));
    if (states.every((s) => s.includes('cluster_state:ok') && s.includes(`cluster_known_nodes:${primaries}`))) break;
    if (i > 200) throw new Error('the bench cluster did not form');
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const c of clients) c.disconnect();
  return { nodes: ports.map((port, i) => ({ host: '127.0.0.1', port, pid: children[i]!.pid! })), stop };
}
