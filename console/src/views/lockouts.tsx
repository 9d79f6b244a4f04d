import { useState } from 'preact/hooks';
import { apiPath } from '../api.js';
import { useAction, useConsole, useLoad } from '../context.js';
import type { LockoutView } from '../types.js';
import { ErrorLine, Section, Table, Time } from '../ui.js';

const POLL_MS = 5_000;

export function LockoutsView() {
  const { api, t, allows } = useConsole();
  const act = useAction();
  const [version, setVersion] = useState(0);
  const lockouts = useLoad(() => api.get<{ lockouts: LockoutView[] }>('/admin/lockouts'), [version], POLL_MS);
  const refresh = (): void => setVersion((v) => v + 1);
  const list = lockouts.data?.lockouts ?? [];
  const unlock = (name: string): void => {
    void act(async () => {
      await api.send('DELETE', apiPath('admin', 'providers', name, 'lockouts'));
      return t('providers.unlocked', { name });
    }, refresh);
  };
  return (
    <div class="view" data-view="lockouts">
      <Section title={t('nav.lockouts')} actions={<button type="button" class="secondary" onClick={refresh}>{t('common.refresh')}</button>}>
        <ErrorLine error={lockouts.error} />
        <Table
          loading={lockouts.data === null}
          empty={list.length === 0}
          head={[t('common.provider'), t('lockouts.address'), t('lockouts.until'), allows('liftLockouts') ? t('common.actions') : null]}
          rows={list.map((l) => (
            <tr key={`${l.systemUser}/${l.address ?? '*'}`} data-lockout={l.systemUser}>
              <td>{l.systemUser}</td>
              <td>{l.address ?? <span class="muted">{t('lockouts.everyAddress')}</span>}</td>
              <td><Time iso={l.until} /></td>
              {allows('liftLockouts') ? <td class="actions"><button type="button" onClick={() => unlock(l.systemUser)}>{t('providers.unlock')}</button></td> : null}
            </tr>
          ))}
        />
      </Section>
    </div>
  );
}
