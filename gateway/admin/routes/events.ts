import type { AdminDeps, Handler, Route } from '../route.js';
import { eventIdOf, limitOf, onlyQueryParams } from '../validate.js';
import { eventView } from '../views.js';

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
   * Server-Sent Events of events stored from now on, shared with every other stream (stream-hub.ts).
   * The feed is followed before answering, so a failing event log is a 503, and an event
   * acknowledged after the answer began is never missed (unless the stream's rate cap skips it,
   * which a `skipped` message says).
   */
  const streamEvents: Handler = async (req) => {
    onlyQueryParams(req.query, ['provider', 'dominio']);
    const provider = req.query.get('provider') || null;
    const dominio = req.query.get('dominio') || null;
    return { status: 200, stream: await deps.streams.open({ provider, dominio }) };
  };

  return [
    { pattern: ['admin', 'events'], handlers: { GET: { role: 'viewer', run: listEvents } } },
    { pattern: ['admin', 'events', 'stream'], handlers: { GET: { role: 'viewer', run: streamEvents } } },
  ];
}
