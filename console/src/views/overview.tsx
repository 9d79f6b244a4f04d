import uPlot from 'uplot';
import { useEffect, useRef } from 'preact/hooks';
import { useConsole, useLoad } from '../context.js';
import type { Overview } from '../types.js';
import { ErrorLine, Section, Table, Time } from '../ui.js';

const POLL_MS = 5_000;
const CHART_HEIGHT = 220;

/** Seconds since the epoch and events/s, as uPlot wants them. */
export function chartData(points: Overview['eventsPerSecond']): [number[], number[]] {
  return [points.map((p) => Date.parse(p.at) / 1000), points.map((p) => p.events)];
}

function EventsChart({ points }: { points: Overview['eventsPerSecond'] }) {
  const { t, lang } = useConsole();
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);

  useEffect(() => {
    const el = box.current;
    if (el === null) return;
    // 24-hour clock times in the operator's language instead of uPlot's built-in English ones.
    const clock = new Intl.DateTimeFormat(lang === 'es' ? 'es-AR' : 'en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    const chart = new uPlot(
      {
        width: Math.max(el.clientWidth, 300),
        height: CHART_HEIGHT,
        legend: { show: false },
        cursor: { drag: { x: false, y: false } },
        scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
        series: [{}, { label: t('overview.chart'), stroke: '#2563eb', fill: 'rgba(37, 99, 235, 0.12)', width: 2, points: { show: false } }],
        axes: [{ stroke: '#555', values: (_u, splits) => splits.map((s) => clock.format(s * 1000)) }, { stroke: '#555', size: 56 }],
      },
      [[], []],
      el,
    );
    plot.current = chart;
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(el.clientWidth, 300), height: CHART_HEIGHT }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      chart.destroy();
      plot.current = null;
    };
  }, [t, lang]);

  useEffect(() => {
    plot.current?.setData(chartData(points));
  }, [points, t, lang]);

  return <div class="chart" ref={box} role="img" aria-label={t('overview.chart')} />;
}

export function OverviewView() {
  const { api, t } = useConsole();
  const { data, error } = useLoad(() => api.get<Overview>('/admin/overview'), [], POLL_MS);
  const na = t('overview.notApplicable');
  return (
    <div class="view" data-view="overview">
      <ErrorLine error={error} />
      <div class="tiles">
        <div class="tile">
          <span>{t('overview.mode')}</span>
          <strong>{data === null ? '…' : t(data.mode === 'embedded' ? 'overview.mode.embedded' : 'overview.mode.scaleOut')}</strong>
        </div>
        <div class="tile">
          <span>{t('overview.ready')}</span>
          <strong class={data?.ready === false ? 'bad' : 'good'}>{data === null ? '…' : t(data.ready ? 'common.yes' : 'common.no')}</strong>
        </div>
        <div class="tile">
          <span>{t('overview.workerLag')}</span>
          <strong>{data === null ? '…' : data.workerLag ?? na}</strong>
        </div>
        <div class="tile">
          <span>{t('overview.poison')}</span>
          <strong>{data === null ? '…' : data.poisonMessages ?? na}</strong>
        </div>
        <div class="tile">
          <span>{t('overview.lockouts')}</span>
          <strong>{data?.lockouts ?? '…'}</strong>
        </div>
      </div>
      <Section title={t('overview.chart')}>
        <EventsChart points={data?.eventsPerSecond ?? []} />
      </Section>
      <div class="columns">
        <Section title={t('overview.providers')}>
          <Table
            loading={data === null}
            empty={data?.providers.length === 0}
            head={[t('common.provider'), t('overview.events15m'), t('overview.lastEvent')]}
            rows={(data?.providers ?? []).map((p) => (
              <tr key={p.systemUser}>
                <td>{p.systemUser}</td>
                <td class="num">{p.events15m}</td>
                <td><Time iso={p.lastEventAt} /></td>
              </tr>
            ))}
          />
        </Section>
        <Section title={t('overview.backends')}>
          <ul class="backends">
            {(data?.backends ?? []).map((b) => (
              <li key={b.name} class={b.ok ? 'good' : 'bad'}>
                <strong>{b.name}</strong> {t(b.ok ? 'overview.backendOk' : 'overview.backendDown')}
                {b.detail === undefined ? null : <span class="muted"> — {b.detail}</span>}
              </li>
            ))}
          </ul>
        </Section>
      </div>
    </div>
  );
}
