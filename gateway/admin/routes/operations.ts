import { ACTIVITY_BUCKET_MS, ACTIVITY_WINDOW_MS, type EventActivity } from '../../../shared/backends/types.js';
import { FailureLog } from '../../../shared/runtime/failure-log.js';
import { probeHandlers, type Readiness } from '../../../shared/runtime/probes.js';
import { AdminError } from '../errors.js';
import type { JsonValue } from '../http.js';
import { param, type AdminDeps, type Handler, type Route } from '../route.js';
import { limitOf, onlyQueryParams } from '../validate.js';
import { poisonView } from '../views.js';

const iso = (ms: number): string => new Date(ms).toISOString();

/** Probes, metrics, the overview and (scale-out) the messages the worker set aside. */
export function operationRoutes(deps: AdminDeps): Route[] {
  const { backends, clock, logger: log } = deps;
  // The console polls the overview every few seconds: a backend that is down is logged once while it lasts.
  const healthFailures = new FailureLog(log, 'admin: health check of the backends failed');
  const readFailures = new Map<string, FailureLog>();
  const readFailure = (what: string): FailureLog => {
    let f = readFailures.get(what);
    if (f === undefined) readFailures.set(what, (f = new FailureLog(log, `admin: overview could not read ${what}`)));
    return f;
  };

  async function ready(): Promise<boolean> {
    try {
      const healthy = await backends.healthy();
      healthFailures.ok();
      return healthy;
    } catch (err) {
      healthFailures.failed(err);
      return false;
    }
  }

  /** Not ready: the reason names the checks of the overview that fail (asked only then). */
  const readiness: Readiness = async () => {
    if (await ready()) return { ready: true };
    const status = await backends.status().catch(() => null);
    const failing = (status?.checks ?? []).filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail ?? 'not answering'}`);
    return { ready: false, reason: failing.length > 0 ? failing.join('; ') : 'the backends are not ready' };
  };
  const noMetrics = (): Promise<string> => Promise.reject(AdminError.of('metricsOff'));
  const probes = probeHandlers(readiness, deps.metrics ?? noMetrics, log);

  /**
   * The console's dashboard. Answers even while a backend is down (that is when it is looked at):
   * what cannot be read is reported in `backends` and left empty or null.
   */
  const overview: Handler = async (req) => {
    onlyQueryParams(req.query, []);
    const now = clock();
    const since = now - ACTIVITY_WINDOW_MS;
    const read = <T>(what: string, reading: Promise<T>): Promise<T | null> =>
      reading.then(
        (value) => {
          readFailure(what).ok();
          return value;
        },
        (err: unknown) => {
          readFailure(what).failed(err);
          return null;
        },
      );
    const [isReady, status, activity, providers, lockouts, poison] = await Promise.all([
      ready(),
      backends.status(),
      read('event activity', backends.events.activity(since)),
      backends.providers.list(),
      backends.lockouts.list(now),
      backends.poison === null ? Promise.resolve(null) : read('poison messages', backends.poison.count()),
    ]);
    const checks = [...status.checks];
    if (activity === null) checks.push({ name: 'events', ok: false, detail: 'stored events could not be counted' });
    return {
      status: 200,
      json: {
        mode: deps.mode,
        ready: isReady,
        backends: checks.map((c) => ({ name: c.name, ok: c.ok, ...(c.detail === undefined ? {} : { detail: c.detail }) })),
        eventsPerSecond: rates(activity, since, now),
        providers: providerActivity(activity, providers.map((p) => p.systemUser)),
        workerLag: status.workerLag,
        poisonMessages: poison,
        lockouts: lockouts.length,
        map: { tileUrl: deps.config.admin.mapTileUrl, attribution: deps.config.admin.mapAttribution },
      },
    };
  };

  const listPoison: Handler = async (req) => {
    onlyQueryParams(req.query, ['limit']);
    const limit = limitOf(req.query.get('limit'));
    const messages = backends.poison === null ? [] : await backends.poison.list(limit);
    return { status: 200, json: { messages: messages.map(poisonView) } };
  };

  const poisonStore = () => {
    if (backends.poison === null) throw AdminError.of('noPoisonEmbedded');
    return backends.poison;
  };

  const redrivePoison: Handler = async (req) => {
    const id = param(req, 'id');
    const store = poisonStore();
    const message = await store.get(id);
    if (message === null) throw AdminError.of('poisonNotFound', { id });
    if (message.truncated) throw AdminError.of('poisonTruncated', { id });
    if (!(await store.redrive(id))) throw AdminError.of('poisonNotFound', { id });
    log.info({ id, topic: message.topic, reason: message.reason }, 'admin: poison message re-driven');
    return { status: 200, json: { redriven: id } };
  };

  const discardPoison: Handler = async (req) => {
    const id = param(req, 'id');
    if (!(await poisonStore().remove(id))) throw AdminError.of('poisonNotFound', { id });
    log.info({ id }, 'admin: poison message discarded');
    return { status: 204 };
  };

  /** Why providers' calls were refused, newest first: of one SystemUser (`provider`), or of all. */
  const listRefusals: Handler = async (req) => {
    onlyQueryParams(req.query, ['provider', 'limit']);
    const limit = limitOf(req.query.get('limit'));
    const provider = req.query.get('provider') ?? undefined;
    const refusals = deps.refusals === undefined ? [] : await deps.refusals(provider, limit);
    return { status: 200, json: { refusals: refusals as unknown as JsonValue } };
  };

  return [
    { pattern: ['admin', 'refusals'], handlers: { GET: { role: 'viewer', run: listRefusals } } },
    { pattern: ['healthz'], handlers: { GET: { role: 'public', run: probes.healthz } } },
    { pattern: ['readyz'], handlers: { GET: { role: 'public', run: probes.readyz } } },
    { pattern: ['metrics'], handlers: { GET: { role: 'viewer', run: probes.metrics } } },
    { pattern: ['admin', 'overview'], handlers: { GET: { role: 'viewer', run: overview } } },
    { pattern: ['admin', 'poison'], handlers: { GET: { role: 'viewer', run: listPoison } } },
    { pattern: ['admin', 'poison', ':id'], handlers: { DELETE: { role: 'admin', run: discardPoison } } },
    { pattern: ['admin', 'poison', ':id', 'redrive'], handlers: { POST: { role: 'operator', run: redrivePoison } } },
  ];
}

/** One point per bucket of the window, oldest first, zeros included: events per second averaged over the bucket. */
function rates(activity: EventActivity | null, since: number, now: number): JsonValue {
  const counts = new Map((activity?.buckets ?? []).map((b) => [b.at, b.events]));
  const points: JsonValue[] = [];
  const last = now - (now % ACTIVITY_BUCKET_MS);
  for (let at = last - ACTIVITY_WINDOW_MS + ACTIVITY_BUCKET_MS; at <= last; at += ACTIVITY_BUCKET_MS) {
    if (at + ACTIVITY_BUCKET_MS <= since) continue;
    points.push({ at: iso(at), events: (counts.get(at) ?? 0) / (ACTIVITY_BUCKET_MS / 1000) });
  }
  return points;
}

/** Every provider, with its events of the window and its latest arrival. */
function providerActivity(activity: EventActivity | null, systemUsers: readonly string[]): JsonValue {
  const byUser = new Map((activity?.providers ?? []).map((p) => [p.systemUser, p]));
  return systemUsers.map((systemUser) => {
    const a = byUser.get(systemUser);
    return { systemUser, events15m: a?.events ?? 0, lastEventAt: a?.lastEventAt == null ? null : iso(a.lastEventAt) };
  });
}
