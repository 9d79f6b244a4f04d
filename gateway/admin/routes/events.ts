import type { StoredEvent } from '../../../shared/backends/types.js';
import type { JsonValue } from '../http.js';
import type { AdminDeps, Handler, Route } from '../routes.js';
import { eventIdOf, limitOf, onlyQueryParams } from '../validate.js';
import { eventView } from '../views.js';

/** Events a stream holds while its client has not been handed the first ones yet. */
const EARLY_EVENTS_MAX = 1000;

export function eventRoutes(deps: AdminDeps): Route[] {
  const { backends } = deps;

  /** Newest first; `nextBeforeId` continues below the last one (null when the page was not full). */
  const listEvents: Handler = async (req) => {
    onlyQueryParams(req.query, ['provider', 'dominio', 'limit', 'beforeId']);
    const provider = req.query.get('provider');
    const dominio = req.query.get('dominio');
    const before = req.query.get('beforeId');
    const limit = limitOf(req.query.get('limit'));
    const events = await backends.events.recent({
      limit,
      ...(provider ? { provider } : {}),
      ...(dominio ? { dominio } : {}),
      ...(before === null || before === '' ? {} : { beforeId: eventIdOf(before, 'beforeId') }),
    });
    const last = events[events.length - 1];
    const nextBeforeId = events.length === limit && last !== undefined ? last.id.toString() : null;
    return { status: 200, json: { events: events.map(eventView), nextBeforeId } };
  };

  /**
   * Server-Sent Events of events stored from now on. The subscription is made before answering,
   * so a failing event log is a 503, and an event acknowledged after the answer began is never
   * missed (scale-out: the stream reads the topic from where it ended when the request came).
   */
  const streamEvents: Handler = async (req) => {
    onlyQueryParams(req.query, ['provider', 'dominio']);
    const provider = req.query.get('provider') || null;
    const dominio = req.query.get('dominio') || null;
    let send: ((event: string, id: string, data: JsonValue) => void) | null = null;
    const early: StoredEvent[] = [];
    const deliver = (e: StoredEvent): void => {
      if ((provider !== null && e.systemUser !== provider) || (dominio !== null && e.dominio !== dominio)) return;
      if (send !== null) send('event', e.id.toString(), eventView(e));
      else if (early.length < EARLY_EVENTS_MAX) early.push(e);
    };
    const subscription = await backends.feed.subscribe(deliver);
    return {
      status: 200,
      stream: {
        start(write) {
          send = write;
          for (const e of early.splice(0)) write('event', e.id.toString(), eventView(e));
        },
        stop: () => subscription.close(),
      },
    };
  };

  return [
    { pattern: ['admin', 'events'], handlers: { GET: listEvents } },
    { pattern: ['admin', 'events', 'stream'], handlers: { GET: streamEvents } },
  ];
}
