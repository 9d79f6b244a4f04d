import { describeEntry, type AuditEntryView } from '../access.js';
import { apiPath } from '../api.js';
import { useConsole, useLoad } from '../context.js';
import { ErrorLine, formatTime } from '../ui.js';

const SHOWN = 20;

/** A provider's own history from the audit trail: "password changed by ana, 27/11/2026 10:02:00", newest first. */
export function ProviderHistory({ systemUser }: { systemUser: string }) {
  const { api, lang, t } = useConsole();
  const history = useLoad(
    () => api.get<{ entries: AuditEntryView[] }>(apiPath('admin', 'providers', systemUser, 'audit'), { limit: SHOWN }),
    [systemUser],
  );
  const entries = history.data?.entries ?? [];
  return (
    <div class="history-panel" data-history={systemUser}>
      <h3>{t('audit.historyOf', { name: systemUser })}</h3>
      <ErrorLine error={history.error} />
      {history.data === null ? <p class="muted">{t('common.loading')}</p> : null}
      {history.data !== null && entries.length === 0 ? <p class="muted">{t('common.none')}</p> : null}
      <ol class="history">
        {entries.map((e) => (
          <li key={e.id} data-audit-id={e.id} class={`outcome-${e.outcome}`}>
            {t('audit.by', { what: describeEntry(e, t), who: e.identity ?? t('audit.nobody'), when: formatTime(e.at, lang) })}
          </li>
        ))}
      </ol>
    </div>
  );
}
