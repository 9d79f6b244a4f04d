/**
 * One front-end thread (GATEWAY_THREADS > 1): uWebSockets.js on the shared port, the bindings and
 * the operation layer, exactly as on the main thread, with the backends replaced by calls to the
 * main thread's (shared-state.ts). Started by pool.ts through protocol.ts's bootstrap.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openScaleOutBackends } from '../../shared/backends/scale-out/index.js';
import type { EventRecord } from '../../shared/backends/types.js';
import { createLogger } from '../../shared/runtime/logger.js';
import { restoreFastStringPrototype } from '../../shared/runtime/fast-string-prototype.js';
import { Metrics } from '../../shared/runtime/metrics.js';
import { nativeBinaryPath } from '../transport/uws.js';
import { startGateway, type GatewayServer } from '../server.js';
import { createOperationLayer } from '../service/operation-layer.js';
import { SharedClock } from './clock.js';
import type { FromFrontEnd, FrontEndData, ToFrontEnd } from './protocol.js';
import { ProviderInvalidation } from './provider-invalidation.js';
import { encodeError, RpcClient } from './rpc.js';
import { remoteState } from './shared-state.js';
import { errorMessage } from '../../shared/util/error-message.js';

if (parentPort === null) throw new Error('gateway/threads/front-end-thread.ts runs as a worker thread (pool.ts starts it).');
const control = parentPort;
// This thread's isolate loaded ioredis too (see there).
restoreFastStringPrototype();
const data = workerData as FrontEndData;
const { config } = data;
const post = (message: FromFrontEnd): void => control.postMessage(message);

// Log lines go to the main thread, which writes them with its own logger (one stream, one format).
// Unbound: the main thread's relay adds `thread` (binding it here too wrote the key twice).
const logger = createLogger(config.log.level, 'gateway', { destination: { write: (line: string) => post({ type: 'log', line }) } });
const clock = data.clock === null ? Date.now : SharedClock.attach(data.clock).now;
const rpc = new RpcClient(data.rpc);
const shared = remoteState(rpc);
// Scale-out with GATEWAY_THREAD_CLIENTS=own: this thread's own Redis and Kafka clients, as a
// separate gateway process would have (ids, dedupe and sessions are safe across them).
// No process metrics here: the main thread's registry has them once for the whole process.
const metrics = new Metrics({ defaults: false });
const own = data.ownClients ? await openScaleOutBackends(config, logger, metrics) : null;
const stores = own ?? shared;
let invalidation: ProviderInvalidation | null = null;
const eventLog = own?.eventLog ?? { append: (events: EventRecord[]) => shared.eventLog.append(events), close: async () => {} };
const { service, providers } = createOperationLayer({
  stores: { providers: stores.providers, lockouts: stores.lockouts, sessions: stores.sessions, commands: stores.commands, trips: stores.trips, eventLog },
  config,
  clock,
  metrics,
  rateLimiter: shared.rateLimiter,
  announce: (systemUser) => invalidation?.announce(systemUser),
  logger,
});
invalidation = new ProviderInvalidation(data.invalidation, (systemUser) => providers.invalidate(systemUser));

let gateway: GatewayServer | null = null;
let stopping: Promise<void> | null = null;

/** Stops accepting, lets in-flight requests finish (up to graceMs), then lets the thread end. */
function stop(graceMs: number): Promise<void> {
  stopping ??= (async () => {
    await gateway?.close(graceMs);
    // Its producer flushed: every event this thread acknowledged is in Kafka.
    await own?.close();
    rpc.close();
    invalidation?.close();
    control.close();
  })();
  return stopping;
}

control.on('message', (message: ToFrontEnd) => {
  if (message.type === 'metrics') {
    // A failed collection answers empty rather than leaving the main thread's scrape waiting.
    metrics.registry.getMetricsAsJSON().then(
      (json) => post({ type: 'metrics', id: message.id, json }),
      () => post({ type: 'metrics', id: message.id, json: [] }),
    );
  } else if (message.type === 'health') {
    const healthy = own === null ? Promise.resolve(true) : own.healthy().catch(() => false);
    void healthy.then((ok) => post({ type: 'health', id: message.id, ok }));
  } else if (message.type === 'refusals') {
    post({ type: 'refusals', id: message.id, refusals: service.refusals.recent(message.systemUser, message.limit) });
  } else if (message.type === 'reload-tls') {
    const reload = gateway === null ? Promise.resolve() : gateway.reloadTls();
    reload.then(
      () => post({ type: 'reloaded', id: message.id, error: null }),
      (err: unknown) => post({ type: 'reloaded', id: message.id, error: errorMessage(err) }),
    );
  } else {
    void stop(message.graceMs);
  }
});

// A thread must not end while uWS holds sockets (Node aborts the process), and an exception that
// escaped a request's own handling is a bug: report it, close the sockets, let the main thread
// stop the gateway (a crash is fatal, pool.ts).
const fatal = (err: unknown): void => {
  post({ type: 'fatal', error: encodeError(err instanceof Error ? Object.assign(new Error(err.stack ?? err.message), { name: err.name }) : err) });
  void stop(0);
};
process.on('uncaughtException', fatal);
process.on('unhandledRejection', fatal);

gateway = await startGateway({ config, service, logger, clock, metrics, port: data.port, ...(data.httpPort === null ? {} : { httpPort: data.httpPort }) });
post({ type: 'ready', native: nativeBinaryPath() });
