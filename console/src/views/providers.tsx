import { useState } from 'preact/hooks';
import { apiPath } from '../api.js';
import { useAction, useConsole, useLoad } from '../context.js';
import type { LockoutView, ProviderView } from '../types.js';
import { ErrorLine, Section, Table, Time } from '../ui.js';
import { ProviderHistory } from './provider-history.js';

interface Deleted {
  deleted: string;
  sessionsEnded: number;
  commandsCancelled: number;
  tripVehiclesRemoved: number;
}

function CreateProvider({ onCreated }: { onCreated: () => void }) {
  const { api, t } = useConsole();
  const act = useAction();
  const [systemUser, setSystemUser] = useState('');
  const [password, setPassword] = useState('');
  const [timeZone, setTimeZone] = useState('');
  const [requireVehicles, setRequireVehicles] = useState(false);
  return (
    <form
      class="inline-form"
      name="create-provider"
      onSubmit={(e) => {
        e.preventDefault();
        const name = systemUser.trim();
        void act(async () => {
          await api.send('POST', '/admin/providers', {
            systemUser: name,
            password,
            requireRegisteredVehicles: requireVehicles,
            ...(timeZone.trim() === '' ? {} : { timeZone: timeZone.trim() }),
          });
          return t('providers.created', { name });
        }, () => {
          setSystemUser('');
          setPassword('');
          setTimeZone('');
          onCreated();
        });
      }}
    >
      <label><span>{t('providers.systemUser')}</span><input name="systemUser" required value={systemUser} onInput={(e) => setSystemUser(e.currentTarget.value)} /></label>
      <label><span>{t('providers.password')}</span><input name="password" type="password" autocomplete="new-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} /></label>
      <label><span>{t('providers.timeZone')}</span><input name="timeZone" placeholder="America/Argentina/Buenos_Aires" value={timeZone} onInput={(e) => setTimeZone(e.currentTarget.value)} /></label>
      <label class="check"><input name="requireRegisteredVehicles" type="checkbox" checked={requireVehicles} onChange={(e) => setRequireVehicles(e.currentTarget.checked)} /><span>{t('providers.requireVehicles')}</span></label>
      <button type="submit">{t('providers.create')}</button>
    </form>
  );
}

type Panel = { systemUser: string; kind: 'password' | 'delete' | 'history' } | null;

function RowPanel({ panel, onDone }: { panel: { systemUser: string; kind: 'password' | 'delete' }; onDone: (changed: boolean) => void }) {
  const { api, t } = useConsole();
  const act = useAction();
  const [value, setValue] = useState('');
  const name = panel.systemUser;
  const path = apiPath('admin', 'providers', name);
  const isDelete = panel.kind === 'delete';
  return (
    <form
      class="inline-form panel"
      name={isDelete ? 'delete-provider' : 'reset-password'}
      onSubmit={(e) => {
        e.preventDefault();
        void act(async () => {
          if (!isDelete) {
            await api.send('PATCH', path, { password: value });
            return t('providers.passwordReset', { name });
          }
          const r = await api.send<Deleted>('DELETE', path, undefined, { confirm: value });
          return t('providers.deleted', { name, sessions: r.sessionsEnded, commands: r.commandsCancelled, vehicles: r.tripVehiclesRemoved });
        }, () => onDone(true));
      }}
    >
      <label>
        <span>{isDelete ? t('providers.deleteConfirm', { name }) : t('providers.newPassword', { name })}</span>
        {isDelete ? (
          <input name="confirm" type="text" autocomplete="off" required value={value} onInput={(e) => setValue(e.currentTarget.value)} />
        ) : (
          <input name="password" type="password" autocomplete="new-password" required value={value} onInput={(e) => setValue(e.currentTarget.value)} />
        )}
      </label>
      <button type="submit" class={isDelete ? 'danger' : undefined} disabled={isDelete && value !== name}>
        {isDelete ? t('providers.delete') : t('providers.resetPassword')}
      </button>
      <button type="button" class="secondary" onClick={() => onDone(false)}>{t('common.cancel')}</button>
    </form>
  );
}

export function ProvidersView() {
  const { api, t, allows } = useConsole();
  const act = useAction();
  const [version, setVersion] = useState(0);
  const [panel, setPanel] = useState<Panel>(null);
  const providers = useLoad(() => api.get<{ providers: ProviderView[] }>('/admin/providers'), [version]);
  const lockouts = useLoad(() => api.get<{ lockouts: LockoutView[] }>('/admin/lockouts'), [version]);
  const refresh = (): void => setVersion((v) => v + 1);
  const locked = new Set((lockouts.data?.lockouts ?? []).map((l) => l.systemUser));
  const list = providers.data?.providers ?? [];
  // A role with no action on providers (a viewer) gets no empty Actions column.
  const anyAction = allows('changeProvider') || allows('liftLockouts') || allows('providerHistory') || allows('deleteProvider');

  const toggle = (p: ProviderView): void => {
    void act(async () => {
      await api.send('PATCH', apiPath('admin', 'providers', p.systemUser), { enabled: !p.enabled });
      return t(p.enabled ? 'providers.disabledNow' : 'providers.enabledNow', { name: p.systemUser });
    }, refresh);
  };
  const unlock = (name: string): void => {
    void act(async () => {
      await api.send('DELETE', apiPath('admin', 'providers', name, 'lockouts'));
      return t('providers.unlocked', { name });
    }, refresh);
  };

  return (
    <div class="view" data-view="providers">
      {allows('createProvider') ? (
        <Section title={t('providers.create')}>
          <CreateProvider onCreated={refresh} />
        </Section>
      ) : null}
      <Section title={t('nav.providers')} actions={<button type="button" class="secondary" onClick={refresh}>{t('common.refresh')}</button>}>
        <ErrorLine error={providers.error ?? lockouts.error} />
        <Table
          loading={providers.data === null}
          empty={list.length === 0}
          head={[t('providers.systemUser'), t('providers.enabled'), t('providers.timeZoneColumn'), t('providers.requireVehicles'), t('providers.createdAt'), anyAction ? t('common.actions') : null]}
          rows={list.flatMap((p) => {
            const row = (
              <tr key={p.systemUser} data-provider={p.systemUser}>
                <td>
                  {p.systemUser} {locked.has(p.systemUser) ? <span class="badge bad">{t('providers.locked')}</span> : null}
                </td>
                <td>{t(p.enabled ? 'common.yes' : 'common.no')}</td>
                <td>{p.timeZone ?? '—'}</td>
                <td>{t(p.requireRegisteredVehicles ? 'common.yes' : 'common.no')}</td>
                <td><Time iso={p.createdAt} /></td>
                {anyAction ? <td class="actions">
                  {allows('changeProvider') ? (
                    <>
                      <button type="button" class="secondary" onClick={() => toggle(p)}>{t(p.enabled ? 'providers.disable' : 'providers.enable')}</button>
                      <button type="button" class="secondary" onClick={() => setPanel({ systemUser: p.systemUser, kind: 'password' })}>{t('providers.resetPassword')}</button>
                    </>
                  ) : null}
                  {locked.has(p.systemUser) && allows('liftLockouts') ? <button type="button" onClick={() => unlock(p.systemUser)}>{t('providers.unlock')}</button> : null}
                  {allows('providerHistory') ? (
                    <button type="button" class="secondary" onClick={() => setPanel(panel?.systemUser === p.systemUser && panel.kind === 'history' ? null : { systemUser: p.systemUser, kind: 'history' })}>
                      {t('audit.history')}
                    </button>
                  ) : null}
                  {allows('deleteProvider') ? <button type="button" class="danger" onClick={() => setPanel({ systemUser: p.systemUser, kind: 'delete' })}>{t('providers.delete')}</button> : null}
                </td> : null}
              </tr>
            );
            if (panel?.systemUser !== p.systemUser) return [row];
            return [
              row,
              <tr key={`${p.systemUser}/panel`} class="panel-row">
                <td colSpan={anyAction ? 6 : 5}>
                  {panel.kind === 'history' ? (
                    <ProviderHistory systemUser={panel.systemUser} />
                  ) : (
                    <RowPanel key={panel.kind} panel={{ systemUser: panel.systemUser, kind: panel.kind }} onDone={(changed) => { setPanel(null); if (changed) refresh(); }} />
                  )}
                </td>
              </tr>,
            ];
          })}
        />
      </Section>
    </div>
  );
}
