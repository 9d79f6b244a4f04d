import { useState } from 'preact/hooks';
import { apiPath } from '../api.js';
import { describeError, useAction, useConsole, useLoad } from '../context.js';
import { COMMAND_STATES, type CommandView } from '../types.js';
import { ErrorLine, ProviderSelect, Section, Table, Time } from '../ui.js';

const PAGE = 50;
const POLL_MS = 5_000;

interface Page {
  commands: CommandView[];
  nextBeforeNumero: number | null;
}

function QueueCommand({ onQueued }: { onQueued: () => void }) {
  const { api, t } = useConsole();
  const act = useAction();
  const [provider, setProvider] = useState('');
  const [cmd, setCmd] = useState('');
  const [unidad, setUnidad] = useState('');
  const [equipo, setEquipo] = useState('');
  return (
    <form
      class="inline-form"
      name="queue-command"
      onSubmit={(e) => {
        e.preventDefault();
        void act(async () => {
          const queued = await api.send<CommandView>('POST', apiPath('admin', 'providers', provider, 'commands'), { cmd, unidad, equipo });
          return t('commands.queued', { numero: queued.numero, name: provider });
        }, () => {
          setCmd('');
          onQueued();
        });
      }}
    >
      <ProviderSelect name="provider" value={provider} onChange={setProvider} required />
      <label><span>{t('commands.cmd')}</span><input name="cmd" required value={cmd} onInput={(e) => setCmd(e.currentTarget.value)} /></label>
      <label><span>{t('commands.unidad')}</span><input name="unidad" required value={unidad} onInput={(e) => setUnidad(e.currentTarget.value)} /></label>
      <label><span>{t('commands.equipo')}</span><input name="equipo" required value={equipo} onInput={(e) => setEquipo(e.currentTarget.value)} /></label>
      <button type="submit">{t('commands.submit')}</button>
    </form>
  );
}

export function CommandsView() {
  const { api, t, allows } = useConsole();
  const act = useAction();
  const [provider, setProvider] = useState('');
  const [state, setState] = useState('');
  const [version, setVersion] = useState(0);
  const [older, setOlder] = useState<Page | null>(null);
  const [olderError, setOlderError] = useState<string | null>(null);
  const filters = { provider, state, limit: PAGE };
  const latest = useLoad(() => api.get<Page>('/admin/commands', filters), [provider, state, version], POLL_MS);
  const refresh = (): void => {
    setOlder(null);
    setVersion((v) => v + 1);
  };
  const commands = [...(latest.data?.commands ?? []), ...(older?.commands ?? [])];
  const nextBefore = older === null ? latest.data?.nextBeforeNumero ?? null : older.nextBeforeNumero;

  const loadOlder = (): void => {
    if (nextBefore === null) return;
    api.get<Page>('/admin/commands', { ...filters, beforeNumero: nextBefore }).then(
      (page) => setOlder((o) => ({ commands: [...(o?.commands ?? []), ...page.commands], nextBeforeNumero: page.nextBeforeNumero })),
      (err: unknown) => setOlderError(describeError(t, err)),
    );
  };
  const cancel = (c: CommandView): void => {
    const name = c.systemUser ?? '';
    void act(async () => {
      await api.send('POST', apiPath('admin', 'providers', name, 'commands', String(c.numero), 'cancel'));
      return t('commands.cancelled', { numero: c.numero, name });
    }, refresh);
  };

  return (
    <div class="view" data-view="commands">
      {allows('queueCommand') ? (
        <Section title={t('commands.queue')}>
          <QueueCommand onQueued={refresh} />
        </Section>
      ) : null}
      <Section title={t('nav.commands')} actions={<button type="button" class="secondary" onClick={refresh}>{t('common.refresh')}</button>}>
        <form class="filters" onSubmit={(e) => e.preventDefault()}>
          <ProviderSelect name="filter-provider" value={provider} onChange={(v) => { setOlder(null); setProvider(v); }} allLabel={t('common.allProviders')} />
          <label>
            <span>{t('common.state')}</span>
            <select name="filter-state" value={state} onChange={(e) => { setOlder(null); setState(e.currentTarget.value); }}>
              <option value="">{t('commands.allStates')}</option>
              {COMMAND_STATES.map((s) => <option key={s} value={s}>{t(`state.${s}`)}</option>)}
            </select>
          </label>
        </form>
        <ErrorLine error={latest.error ?? olderError} />
        <Table
          loading={latest.data === null}
          empty={commands.length === 0}
          head={[t('commands.numero'), t('common.provider'), t('commands.cmd'), t('commands.unidad'), t('commands.equipo'), t('common.state'), t('commands.created'), t('commands.deliveries'), t('commands.history'), allows('cancelCommand') ? t('common.actions') : null]}
          rows={commands.map((c) => (
            <tr key={`${c.systemUser ?? ''}/${c.numero}`} data-command={`${c.systemUser ?? ''}/${c.numero}`}>
              <td class="num">{c.numero}</td>
              <td>{c.systemUser}</td>
              <td>{c.cmd}</td>
              <td>{c.unidad}</td>
              <td>{c.equipo}</td>
              <td><span class={`badge state-${c.state}`} data-state={c.state}>{t(`state.${c.state}`)}</span></td>
              <td><Time iso={c.createdAt} /></td>
              <td class="num">{c.deliveries}</td>
              <td>
                {c.history.length === 0 ? null : (
                  <details>
                    <summary>{c.history.length}</summary>
                    <ol class="history">
                      {c.history.map((h, i) => (
                        <li key={i}><Time iso={h.at} /> {h.kind}{h.message === null || h.message === '' ? '' : `: ${h.message}`}</li>
                      ))}
                    </ol>
                  </details>
                )}
              </td>
              {allows('cancelCommand') ? <td class="actions">
                {c.state === 'pending' || c.state === 'in_process' ? (
                  <button type="button" class="danger" onClick={() => cancel(c)}>{t('common.cancel')}</button>
                ) : null}
              </td> : null}
            </tr>
          ))}
        />
        {nextBefore === null ? null : <button type="button" onClick={loadOlder}>{t('common.older')}</button>}
      </Section>
    </div>
  );
}
