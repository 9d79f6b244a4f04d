import { useEffect, useRef, useState } from 'preact/hooks';
import { apiPath, withQuery } from '../api.js';
import { describeError, useConsole } from '../context.js';
import { addFresh, mergeEvents } from '../events-list.js';
import { followStream, type StreamState } from '../stream.js';
import type { EventView } from '../types.js';
import { ErrorLine, ProviderSelect, Section, Table, Time } from '../ui.js';

const PAGE = 100;
/** Rows kept on screen while following; older ones are a click away. */
const MAX_ROWS = 1000;
/** Rows highlighted as just arrived. */
const FRESH_MAX = 50;

interface Page {
  events: EventView[];
  nextBeforeId: string | null;
}

export function EventsView({ onUnauthorized }: { onUnauthorized: () => void }) {
  const { api, token, t } = useConsole();
  const [provider, setProvider] = useState('');
  const [dominioInput, setDominioInput] = useState('');
  const [dominio, setDominio] = useState('');
  const [events, setEvents] = useState<EventView[] | null>(null);
  const [nextBeforeId, setNextBeforeId] = useState<string | null>(null);
  const [fresh, setFresh] = useState<ReadonlySet<string>>(new Set());
  const [state, setState] = useState<StreamState>('connecting');
  const [error, setError] = useState<string | null>(null);
  // Read through a ref so a language switch does not restart the stream.
  const tRef = useRef(t);
  tRef.current = t;

  useEffect(() => {
    let live = true;
    let first = true;
    setEvents(null);
    setNextBeforeId(null);
    setFresh(new Set());
    const filters = { provider, dominio };
    const loadLatest = (): void => {
      api.get<Page>('/admin/events', { ...filters, limit: PAGE }).then(
        (page) => {
          if (!live) return;
          setEvents((current) => mergeEvents(current ?? [], page.events, MAX_ROWS));
          // Reconnecting keeps the cursor of the older pages already shown.
          if (first) setNextBeforeId(page.nextBeforeId);
          first = false;
          setError(null);
        },
        (err: unknown) => live && setError(describeError(tRef.current, err)),
      );
    };
    const stop = followStream({
      url: withQuery(apiPath('admin', 'events', 'stream'), filters),
      token,
      onMessage(data) {
        const event = JSON.parse(data) as EventView;
        setEvents((current) => mergeEvents(current ?? [], [event], MAX_ROWS));
        setFresh((ids) => addFresh(ids, event.id, FRESH_MAX));
      },
      onState(next) {
        if (!live) return;
        setState(next);
        // Whatever was stored while we were not connected: the latest page fills the gap.
        if (next === 'open') loadLatest();
      },
      onUnauthorized,
    });
    return () => {
      live = false;
      stop();
    };
  }, [provider, dominio, api, token, onUnauthorized]);

  const loadOlder = (): void => {
    if (nextBeforeId === null) return;
    api.get<Page>('/admin/events', { provider, dominio, limit: PAGE, beforeId: nextBeforeId }).then(
      (page) => {
        setEvents((current) => [...(current ?? []), ...page.events]);
        setNextBeforeId(page.nextBeforeId);
      },
      (err: unknown) => setError(describeError(t, err)),
    );
  };

  const stateLabel = state === 'open' ? t('events.live') : state === 'retrying' ? t('events.reconnecting') : t('events.connecting');
  const fmt = (n: number | null): string => (n === null ? '' : String(n));
  return (
    <div class="view" data-view="events">
      <Section
        title={t('nav.events')}
        actions={<span class={`stream stream-${state}`} data-stream-state={state}>{stateLabel}</span>}
      >
        <form
          class="filters"
          onSubmit={(e) => {
            e.preventDefault();
            setDominio(dominioInput.trim());
          }}
        >
          <ProviderSelect name="provider" value={provider} onChange={setProvider} allLabel={t('common.allProviders')} />
          <label>
            <span>{t('events.filterDominio')}</span>
            <input name="dominio" value={dominioInput} onInput={(e) => setDominioInput(e.currentTarget.value)} onBlur={() => setDominio(dominioInput.trim())} />
          </label>
        </form>
        <ErrorLine error={error} />
        <Table
          loading={events === null}
          empty={events?.length === 0}
          head={[t('events.id'), t('common.provider'), t('common.dominio'), t('common.nroSerie'), t('events.codigo'), t('events.position'), t('events.speed'), t('events.eventTime'), t('events.storedAt'), t('events.operation')]}
          rows={(events ?? []).map((e) => (
            <tr key={e.id} class={fresh.has(e.id) ? 'fresh' : undefined} data-event-id={e.id}>
              <td class="num">{e.id}</td>
              <td>{e.systemUser}</td>
              <td>{e.dominio}</td>
              <td>{e.nroSerie}</td>
              <td>{e.codigo}</td>
              <td class={e.validPosition ? 'num' : 'num bad'} title={e.validPosition ? undefined : t('events.invalidPosition')}>
                {e.latitud.toFixed(5)}, {e.longitud.toFixed(5)}
              </td>
              <td class="num">{fmt(e.velocidad)}</td>
              <td><Time iso={e.eventTime} /></td>
              <td><Time iso={e.storedAt} /></td>
              <td>{e.operation}</td>
            </tr>
          ))}
        />
        {nextBeforeId === null ? null : <button type="button" onClick={loadOlder}>{t('common.older')}</button>}
      </Section>
    </div>
  );
}
