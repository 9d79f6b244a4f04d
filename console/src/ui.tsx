import type { ComponentChildren } from 'preact';
import { useConsole, useLoad } from './context.js';
import { dateLocale, type Lang } from './i18n.js';
import type { ProviderView } from './types.js';

const formats = new Map<Lang, Intl.DateTimeFormat>();

/** A date and time in the operator's language and their browser's time zone. */
export function formatTime(iso: string | null, lang: Lang): string {
  if (iso === null) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  let format = formats.get(lang);
  if (format === undefined) {
    // The browser's own locale for the language, so a date reads as the browser's date fields write it.
    format = new Intl.DateTimeFormat(dateLocale(lang, navigator.languages), { dateStyle: 'short', timeStyle: 'medium', hourCycle: 'h23' });
    formats.set(lang, format);
  }
  return format.format(date);
}

export function Time({ iso }: { iso: string | null }) {
  const { lang, t } = useConsole();
  if (iso === null) return <span class="muted">{t('common.never')}</span>;
  return <time dateTime={iso} title={iso}>{formatTime(iso, lang)}</time>;
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card">
      <header class="card-head">
        <h2>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}

/** A table, or "loading"/"nothing" in its place; rows keep the caller's keys. A null heading is a column not shown (the role has no action for it). */
export function Table({ head, rows, empty, loading }: { head: (string | null)[]; rows: ComponentChildren[]; empty?: boolean; loading?: boolean }) {
  const { t } = useConsole();
  if (loading === true) return <p class="muted">{t('common.loading')}</p>;
  if (empty === true) return <p class="muted">{t('common.none')}</p>;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>{head.filter((h) => h !== null).map((h) => <th key={h}>{h}</th>)}</tr>
        </thead>
        <tbody>{rows}</tbody>
      </table>
    </div>
  );
}

/** A message whose `{name}` placeholders are filled with elements (a command in <code>). */
export function richText(template: string, parts: Readonly<Record<string, ComponentChildren>>): ComponentChildren[] {
  return template.split(/(\{\w+\})/).map((piece) => {
    const name = /^\{(\w+)\}$/.exec(piece)?.[1];
    return name !== undefined && name in parts ? parts[name] : piece;
  });
}

export function ErrorLine({ error }: { error: string | null }) {
  return error === null ? null : <p class="error" role="alert">{error}</p>;
}

/** Providers for a <select>; reloads when `version` changes. */
export function useProviders(version = 0): ProviderView[] {
  const { api } = useConsole();
  const { data } = useLoad(() => api.get<{ providers: ProviderView[] }>('/admin/providers'), [version]);
  return data?.providers ?? [];
}

export function ProviderSelect(props: { value: string; onChange(value: string): void; allLabel?: string; name: string; required?: boolean }) {
  const { t } = useConsole();
  const providers = useProviders();
  return (
    <label>
      <span>{t('common.provider')}</span>
      <select name={props.name} value={props.value} required={props.required} onChange={(e) => props.onChange(e.currentTarget.value)}>
        <option value="">{props.allLabel ?? '—'}</option>
        {providers.map((p) => (
          <option key={p.systemUser} value={p.systemUser}>{p.systemUser}</option>
        ))}
      </select>
    </label>
  );
}
