import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { StoredEvent } from '../../../shared/backends/types.js';
import { invalid } from '../errors.js';
import { param, PROVIDER, providerOr404, type AdminDeps, type Handler, type Route } from '../route.js';
import { dominioOf, onlyQueryParams } from '../validate.js';
import { eventView } from '../views.js';

/**
 * The console's map: each vehicle's latest position and one vehicle's track. Both are read from
 * the stores' existing newest-first event query (events_by_provider in SQLite, the id order in
 * ClickHouse) in pages of READ_PAGE, giving the event loop a turn between pages, and stop at a
 * fixed number of events read: no request reads without bound or holds the main thread long.
 */
export const READ_PAGE = 100;
/** Events read at most to find the latest position of each vehicle. */
export const POSITIONS_SCAN_MAX = 5_000;
const POSITIONS_DEFAULT_LIMIT = 500;
const POSITIONS_MAX_LIMIT = 2_000;
const TRACK_DEFAULT_LIMIT = 1_000;
const TRACK_MAX_LIMIT = 5_000;

function boundedInt(raw: string | null, field: string, fallback: number, max: number): number {
  if (raw === null || raw === '') return fallback;
  const n = /^\d{1,7}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= max)) throw invalid(field, `${field} must be a whole number between 1 and ${max}, got "${raw}".`);
  return n;
}

function timeOf(raw: string | null, field: string): number | null {
  if (raw === null || raw === '') return null;
  // ISO-8601 with an explicit zone only: a local time would mean something else on every server.
  const ms = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,3})?)?(Z|[+-]\d\d:\d\d)$/.test(raw) ? Date.parse(raw) : NaN;
  if (Number.isNaN(ms)) throw invalid(field, `${field} must be an ISO-8601 time with a zone (e.g. 2026-01-31T12:00:00Z), got "${raw}".`);
  return ms;
}

/**
 * Received later (the id breaks a tie). Not the id alone: in the scale-out mode each gateway
 * allocates from its own block of ids, so a higher id can have arrived earlier.
 */
function laterThan(a: StoredEvent, b: StoredEvent): boolean {
  return a.receivedAt !== b.receivedAt ? a.receivedAt > b.receivedAt : a.id > b.id;
}

/** Newest first by id, page by page, at most `max` events. */
async function scanNewest(
  deps: AdminDeps,
  filter: { provider: string; dominio?: string },
  max: number,
  visit: (event: StoredEvent) => void,
): Promise<{ read: number; exhausted: boolean }> {
  let read = 0;
  let beforeId: bigint | undefined;
  for (;;) {
    const want = Math.min(READ_PAGE, max - read);
    if (want <= 0) return { read, exhausted: false };
    const page = await deps.backends.events.recent({ ...filter, limit: want, ...(beforeId === undefined ? {} : { beforeId }) });
    read += page.length;
    for (const event of page) visit(event);
    const last = page[page.length - 1];
    if (page.length < want || last === undefined) return { read, exhausted: true };
    beforeId = last.id;
    await yieldToEventLoop();
  }
}

export function mapRoutes(deps: AdminDeps): Route[] {
  /**
   * The latest event (by reception) of each vehicle seen among the provider's newest
   * POSITIONS_SCAN_MAX events, latest first, the first `limit` vehicles met. `complete` is false
   * when the scan stopped at its bound before the provider's oldest event (a vehicle silent since
   * then is not listed) or vehicles past `limit` were left out.
   */
  const positions: Handler = async (req) => {
    const systemUser = param(req, 'systemUser');
    onlyQueryParams(req.query, ['limit']);
    const limit = boundedInt(req.query.get('limit'), 'limit', POSITIONS_DEFAULT_LIMIT, POSITIONS_MAX_LIMIT);
    await providerOr404(deps.backends, systemUser);
    const latest = new Map<string, StoredEvent>();
    let dropped = false;
    const scan = await scanNewest(deps, { provider: systemUser }, POSITIONS_SCAN_MAX, (event) => {
      const kept = latest.get(event.dominio);
      if (kept === undefined && latest.size >= limit) dropped = true;
      else if (kept === undefined || laterThan(event, kept)) latest.set(event.dominio, event);
    });
    const positions = [...latest.values()].sort((a, b) => (laterThan(a, b) ? -1 : 1));
    return { status: 200, json: { positions: positions.map(eventView), eventsRead: scan.read, complete: scan.exhausted && !dropped } };
  };

  /**
   * One vehicle's events received in [from, to], oldest first, taken from its newest 2 × `limit`
   * events (`complete` is false when it has more, or more than `limit` fall in the range: the
   * newest are kept). Received time, not the provider's event time, which a device may get wrong.
   */
  const track: Handler = async (req) => {
    const systemUser = param(req, 'systemUser');
    const dominio = dominioOf(param(req, 'dominio'));
    onlyQueryParams(req.query, ['from', 'to', 'limit']);
    const from = timeOf(req.query.get('from'), 'from');
    const to = timeOf(req.query.get('to'), 'to');
    const limit = boundedInt(req.query.get('limit'), 'limit', TRACK_DEFAULT_LIMIT, TRACK_MAX_LIMIT);
    if (from !== null && to !== null && from > to) throw invalid('from', 'from must not be later than to.');
    await providerOr404(deps.backends, systemUser);
    let inRange: StoredEvent[] = [];
    // Read to the bound rather than stopping at the first event before `from`: the scale-out mode's
    // ids come in blocks per gateway, so id order is not quite reception order.
    const scan = await scanNewest(deps, { provider: systemUser, dominio }, limit * 2, (event) => {
      if ((from === null || event.receivedAt >= from) && (to === null || event.receivedAt <= to)) inRange.push(event);
    });
    inRange.sort((a, b) => (laterThan(a, b) ? 1 : -1));
    const complete = scan.exhausted && inRange.length <= limit;
    if (inRange.length > limit) inRange = inRange.slice(-limit);
    return { status: 200, json: { events: inRange.map(eventView), complete } };
  };

  return [
    { pattern: [...PROVIDER, 'positions'], handlers: { GET: { role: 'viewer', run: positions } } },
    { pattern: [...PROVIDER, 'track', ':dominio'], handlers: { GET: { role: 'viewer', run: track } } },
  ];
}
