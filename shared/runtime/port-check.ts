import net from 'node:net';
import { errorMessage } from '../util/error-message.js';
import { listenFailure, StartError, type ListenerSettings } from './start-error.js';

/**
 * Refuses (StartError naming the setting) when another process already listens on `port`.
 *
 * uWebSockets.js listens with SO_REUSEPORT, which lets a second process bind the same port
 * silently: the kernel then spreads connections over both, two gateways on two databases answer
 * at random. A plain bind (no SO_REUSEPORT) fails on a port anyone listens on, so it is the probe;
 * it is closed again before our own listener binds. The front-end threads of this process bind
 * after this check, sharing the port among themselves as before. Port 0 (a free port) is not checked.
 */
export async function ensurePortFree(host: string, port: number, settings: ListenerSettings): Promise<void> {
  if (port === 0) return;
  const probe = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ host, port, exclusive: true }, resolve);
    });
  } catch (err) {
    throw listenFailure(err, settings, host, port) ?? new StartError(settings.port, `cannot listen on ${settings.host} ${host}, ${settings.port} ${port}: ${errorMessage(err)}`, { cause: err });
  }
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

/** The settings of the public port, the plain port beside TLS, and the admin API's port. */
export const LISTENERS = {
  service: { port: 'PORT', host: 'HOST' },
  plain: { port: 'HTTP_PORT', host: 'HOST' },
  admin: { port: 'ADMIN_PORT', host: 'ADMIN_HOST' },
} as const satisfies Record<string, ListenerSettings>;
