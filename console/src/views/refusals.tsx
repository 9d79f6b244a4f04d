import { useState } from 'preact/hooks';
import { useConsole, useLoad } from '../context.js';
import type { RefusalView } from '../types.js';
import { ErrorLine, ProviderSelect, Section, Table, Time } from '../ui.js';

/** GET /admin/refusals: why providers' calls were refused, each with its reason, optionally of one provider. */
export function RefusalsView() {
  const { api, t } = useConsole();
  const [provider, setProvider] = useState('');
  const [version, setVersion] = useState(0);
  const refusals = useLoad(
    () => api.get<{ refusals: RefusalView[] }>('/admin/refusals', provider === '' ? {} : { provider }),
    [provider, version],
  );
  const list = refusals.data?.refusals ?? [];
  return (
    <div class="view" data-view="refusals">
      <Section title={t('nav.refusals')} actions={<button type="button" class="secondary" onClick={() => setVersion((v) => v + 1)}>{t('common.refresh')}</button>}>
        <p class="muted">{t('refusals.intro')}</p>
        <div class="filters">
          <ProviderSelect name="provider" value={provider} onChange={setProvider} allLabel={t('common.allProviders')} />
        </div>
        <ErrorLine error={refusals.error} />
        <Table
          loading={refusals.data === null}
          empty={list.length === 0}
          head={[t('audit.at'), t('refusals.systemUser'), t('refusals.operation'), t('refusals.answer'), t('refusals.reason'), t('audit.address')]}
          rows={list.map((r, i) => (
            <tr key={`${r.at}/${i}`} data-refusal={r.systemUser ?? ''} data-answer={r.answer}>
              <td><Time iso={r.at} /></td>
              <td>{r.systemUser ?? <span class="muted">{t('refusals.nobody')}</span>}</td>
              <td>{r.operation}</td>
              <td class="num">{r.answer}</td>
              <td class="wrap">{r.reason}</td>
              <td>{r.address}</td>
            </tr>
          ))}
        />
      </Section>
    </div>
  );
}
