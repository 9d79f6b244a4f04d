import { useEffect, useRef, useState } from 'preact/hooks';
import { apiPath, withQuery } from '../api.js';
import { describeError, useConsole } from '../context.js';
import { FleetMap } from '../fleet-map.js';
import { keepLatest, placeable, type Age } from '../fleet.js';
import { followStream, type StreamState } from '../stream.js';
import type { EventView, Overview } from '../types.js';
import { ErrorLine, Section, Time, useProviders } from '../ui.js';

/** Vehicles asked for at most (the API's bound is higher; a map of more is unreadable anyway). */
const POSITIONS_LIMIT = 1000;
const AGE_REFRESH_MS = 30_000;
const RANGES_HOURS = [1, 6, 24, 168] as const;

interface Positions {
  positions: EventView[];
  complete: boolean;
}

interface Track {
  events: EventView[];
  complete: boolean;
}

function EventDetail({ event }: { event: EventView }) {
  const { t } = useConsole();
  return (
    <dl class="event-detail" data-selected-event={event.id}>
      <dt>{t('common.dominio')}</dt><dd data-field="dominio">{event.dominio}</dd>
      <dt>{t('common.nroSerie')}</dt><dd>{event.nroSerie}</dd>
      <dt>{t('events.id')}</dt><dd class="num">{event.id}</dd>
      <dt>{t('events.codigo')}</dt><dd data-field="codigo">{event.codigo}</dd>
      <dt>{t('events.position')}</dt><dd class="num" data-field="position">{event.latitud.toFixed(5)}, {event.longitud.toFixed(5)}</dd>
      <dt>{t('events.speed')}</dt><dd class="num">{event.velocidad ?? ''}</dd>
      <dt>{t('events.eventTime')}</dt><dd><Time iso={event.eventTime} /></dd>
      <dt>{t('map.receivedAt')}</dt><dd><Time iso={event.receivedAt} /></dd>
    </dl>
  );
}

export function MapView({ onUnauthorized }: { onUnauthorized: () => void }) {
  const { api, token, t } = useConsole();
  const providers = useProviders();
  const [provider, setProvider] = useState('');
  const [tiles, setTiles] = useState<Overview['map'] | null>(null);
  const [count, setCount] = useState<number | null>(null);
  const [complete, setComplete] = useState(true);
  const [selected, setSelected] = useState<EventView | null>(null);
  const [dominio, setDominio] = useState('');
  const [hours, setHours] = useState<number>(24);
  const [trackInfo, setTrackInfo] = useState<{ dominio: string; points: number; complete: boolean } | null>(null);
  const [state, setState] = useState<StreamState>('connecting');
  const [error, setError] = useState<string | null>(null);
  const [tilesLoading, setTilesLoading] = useState(true);
  const container = useRef<HTMLDivElement>(null);
  const fleet = useRef<FleetMap | null>(null);
  const trackOf = useRef<string | null>(null);
  const tRef = useRef(t);
  tRef.current = t;

  // The first provider until the operator picks one: positions are per provider.
  const chosen = provider !== '' ? provider : (providers[0]?.systemUser ?? '');

  useEffect(() => {
    api.get<Overview>('/admin/overview').then(
      (o) => setTiles(o.map),
      (err: unknown) => setError(describeError(tRef.current, err)),
    );
  }, [api]);

  useEffect(() => {
    if (tiles === null || container.current === null) return;
    setTilesLoading(true);
    const map = new FleetMap(container.current, { ...tiles, onSelect: setSelected, onTiles: setTilesLoading });
    fleet.current = map;
    return () => {
      fleet.current = null;
      map.destroy();
    };
  }, [tiles]);

  useEffect(() => {
    if (tiles === null || chosen === '') return;
    let live = true;
    const latest = new Map<string, EventView>();
    // Each provider's fleet is framed once, when it first has positions; later reloads keep the operator's view.
    let framed = false;
    setSelected(null);
    setCount(null);
    const load = (): void => {
      api.get<Positions>(apiPath('admin', 'providers', chosen, 'positions'), { limit: POSITIONS_LIMIT }).then(
        (page) => {
          if (!live) return;
          for (const e of page.positions) keepLatest(latest, e);
          framed = (fleet.current?.setPositions([...latest.values()], Date.now(), !framed) ?? false) || framed;
          setCount(latest.size);
          setComplete(page.complete);
          setError(null);
        },
        (err: unknown) => live && setError(describeError(tRef.current, err)),
      );
    };
    const stop = followStream({
      url: withQuery(apiPath('admin', 'events', 'stream'), { provider: chosen }),
      token,
      onMessage(data) {
        const event = JSON.parse(data) as EventView;
        if (!keepLatest(latest, event)) return;
        fleet.current?.place(event, Date.now());
        if (trackOf.current === event.dominio && placeable(event)) {
          fleet.current?.extendTrack(event);
          setTrackInfo((info) => (info === null ? null : { ...info, points: info.points + 1 }));
        }
        setCount(latest.size);
        setSelected((s) => (s !== null && s.dominio === event.dominio ? event : s));
      },
      onState(next) {
        if (!live) return;
        setState(next);
        // What was stored while not connected: the positions are read again.
        if (next === 'open') load();
      },
      onUnauthorized,
    });
    const ages = setInterval(() => fleet.current?.refreshAges(Date.now()), AGE_REFRESH_MS);
    return () => {
      live = false;
      stop();
      clearInterval(ages);
    };
  }, [chosen, tiles, api, token, onUnauthorized]);

  const showTrack = (e: Event): void => {
    e.preventDefault();
    const wanted = dominio.trim();
    if (wanted === '' || chosen === '') return;
    const from = new Date(Date.now() - hours * 3_600_000).toISOString();
    api.get<Track>(apiPath('admin', 'providers', chosen, 'track', wanted), { from }).then(
      (track) => {
        trackOf.current = wanted;
        fleet.current?.showTrack(track.events);
        setTrackInfo({ dominio: wanted, points: track.events.length, complete: track.complete });
        setError(null);
      },
      (err: unknown) => setError(describeError(t, err)),
    );
  };

  const clearTrack = (): void => {
    trackOf.current = null;
    fleet.current?.clearTrack();
    setTrackInfo(null);
  };

  const stateLabel = state === 'open' ? t('events.live') : state === 'retrying' ? t('events.reconnecting') : t('events.connecting');
  const ages: Age[] = ['fresh', 'recent', 'stale'];
  return (
    <div class="view" data-view="map">
      <Section title={t('nav.map')} actions={<span class={`stream stream-${state}`} data-stream-state={state}>{stateLabel}</span>}>
        <form class="filters" onSubmit={showTrack}>
          <label>
            <span>{t('common.provider')}</span>
            <select name="provider" value={chosen} onChange={(e) => { clearTrack(); setProvider(e.currentTarget.value); }}>
              {providers.map((p) => <option key={p.systemUser} value={p.systemUser}>{p.systemUser}</option>)}
            </select>
          </label>
          <label>
            <span>{t('common.dominio')}</span>
            <input name="dominio" value={dominio} onInput={(e) => setDominio(e.currentTarget.value)} />
          </label>
          <label>
            <span>{t('map.range')}</span>
            <select name="range" value={String(hours)} onChange={(e) => setHours(Number(e.currentTarget.value))}>
              {RANGES_HOURS.map((h) => <option key={h} value={String(h)}>{t('map.lastHours', { hours: h })}</option>)}
            </select>
          </label>
          <button type="submit" name="showTrack">{t('map.showTrack')}</button>
          {trackInfo === null ? null : <button type="button" class="secondary" onClick={clearTrack}>{t('map.clearTrack')}</button>}
        </form>
        <ErrorLine error={error} />
        <p class="muted map-summary">
          <span data-vehicles={count ?? ''}>{count === null ? t('common.loading') : t('map.vehicles', { count })}</span>
          {complete ? null : <span> · {t('map.incomplete')}</span>}
          {trackInfo === null ? null : <span data-track-points={trackInfo.points}> · {t('map.trackOf', { dominio: trackInfo.dominio, points: trackInfo.points })}{trackInfo.complete ? '' : ` (${t('map.trackCut')})`}</span>}
          <span class="legend">
            {ages.map((a) => <span key={a}><i class={`age-${a}`} />{t(`map.age.${a}`)}</span>)}
          </span>
        </p>
        <div class="map-layout">
          <div class="map-frame">
            <div class="map" ref={container} />
            {tilesLoading || tiles === null ? null : (
              <p class="map-note" role="status" data-tiles="failing">{t('map.tilesFailing', { host: hostOf(tiles.tileUrl) })}</p>
            )}
          </div>
          <aside class="map-side">
            {selected === null ? <p class="muted">{t('map.clickHint')}</p> : (
              <>
                <EventDetail event={selected} />
                <button type="button" onClick={() => setDominio(selected.dominio)}>{t('map.useForTrack')}</button>
              </>
            )}
          </aside>
        </div>
      </Section>
    </div>
  );
}

/** The tile server's host, as the operator would look it up (the template's {s} subdomain left out). */
function hostOf(template: string): string {
  try {
    return new URL(template.replace(/\{[a-z]\}\./g, '').replace(/\{[^}]+\}/g, '0')).host;
  } catch {
    return template;
  }
}
