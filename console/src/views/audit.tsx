import { useState } from 'preact/hooks';
import { describeEntry, type AuditEntryView } from '../access.js';
import { describeError, useConsole, useLoad } from '../context.js';
import { ErrorLine, Section, Table, Time } from '../ui.js';

const PAGE = 50;

interface Page {
  entries: AuditEntryView[];
  nextBefore: number | null;
}

interface Filters {
  identity: string;
  target: string;
  /** A datetime-local value, in the browser's zone ('' = no bound). */
  since: string;
}

/** `2026-11-27T10:00` in the browser's zone as an ISO instant, which the API wants with its zone. */
function sinceOf(local: string): string | undefined {
  if (local === '') return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** The admin API's audit trail: who did what, when, from where; filtered by identity, target and time, paged. */
export function AuditView() {
  const { api, t } = useConsole();
  const [draft, setDraft] = useState<Filters>({ identity: '', target: '', since: '' });
  const [filters, setFilters] = useState<Filters>(draft);
  const [version, setVersion] = useState(0);
  const [older, setOlder] = useState<Page | null>(null);
  const [olderError, setOlderError] = useState<string | null>(null);
  const query = { identity: filters.identity.trim(), target: filters.target.trim(), since: sinceOf(filters.since), limit: PAGE };
  const latest = useLoad(() => api.get<Page>('/admin/audit', query), [filters, version]);
  const entries = [...(latest.data?.entries ?? []), ...(older?.entries ?? [])];
  const nextBefore = older === null ? (latest.data?.nextBefore ?? null) : older.nextBefore;
  const refresh = (): void => {
    setOlder(null);
    setVersion((v) => v + 1);
  };
  const loadOlder = (): void => {
    if (nextBefore === null) return;
    api.get<Page>('/admin/audit', { ...query, before: nextBefore }).then(
      (page) => setOlder((o) => ({ entries: [...(o?.entries ?? []), ...page.entries], nextBefore: page.nextBefore })),
      (err: unknown) => setOlderError(describeError(t, err)),
    );
  };
  const field = (name: 'identity' | 'target', label: string) => (
    <label>
      <span>{label}</span>
      <input name={name} value={draft[name]} onInput={(e) => setDraft({ ...draft, [name]: e.currentTarget.value })} />
    </label>
  );

  return (
    <div class="view" data-view="audit">
      <Section title={t('nav.audit')} actions={<button type="button" class="secondary" onClick={refresh}>{t('common.refresh')}</button>}>
        <form
          class="filters"
          name="audit-filters"
          onSubmit={(e) => {
            e.preventDefault();
            setOlder(null);
            setFilters(draft);
          }}
        >
          {field('identity', t('audit.identity'))}
          {field('target', t('audit.target'))}
          <label>
            <span>{t('audit.since')}</span>
            <input name="since" type="datetime-local" value={draft.since} onInput={(e) => setDraft({ ...draft, since: e.currentTarget.value })} />
          </label>
          <button type="submit">{t('audit.apply')}</button>
        </form>
        <ErrorLine error={latest.error ?? olderError} />
        <Table
          loading={latest.data === null}
          empty={entries.length === 0}
          head={[t('audit.at'), t('audit.identity'), t('audit.role'), t('audit.address'), t('audit.what'), t('audit.target'), t('audit.outcome'), t('audit.changes')]}
          rows={entries.map((e) => (
            <tr key={e.id} data-audit-id={e.id} data-route={e.route} data-outcome={e.outcome}>
              <td><Time iso={e.at} /></td>
              <td>{e.identity ?? <span class="muted">{t('audit.nobody')}</span>}</td>
              <td>{e.role === null ? '—' : t(`role.${e.role}`)}</td>
              <td>{e.address}</td>
              <td class="wrap" title={`${e.route} · ${e.requestId}`}>{describeEntry(e, t)}</td>
              <td class="wrap">{e.target ?? '—'}</td>
              <td><span class={`badge outcome-${e.outcome}`}>{t(`audit.outcome.${e.outcome}`)} {e.status}</span></td>
              <td class="wrap">{e.changes.join(', ')}</td>
            </tr>
          ))}
        />
        {nextBefore === null ? null : <button type="button" onClick={loadOlder}>{t('common.older')}</button>}
      </Section>
    </div>
  );
}
