import { useState } from 'preact/hooks';
import { apiPath } from '../api.js';
import { useAction, useConsole, useLoad } from '../context.js';
import type { VehicleView } from '../types.js';
import { ErrorLine, ProviderSelect, Section, Table, Time } from '../ui.js';

const POLL_MS = 10_000;
/** Vehicles per page: a trip can hold 100,000 of them, and the page is polled. */
const PAGE = 100;

export function VehiclesView() {
  const { api, t, allows } = useConsole();
  const act = useAction();
  const [provider, setProvider] = useState('');
  const [version, setVersion] = useState(0);
  /** The Dominio the shown page starts after (null: the first page). */
  const [after, setAfter] = useState<string | null>(null);
  const vehicles = useLoad(
    () =>
      provider === ''
        ? Promise.resolve(null)
        : api.get<{ vehicles: VehicleView[]; nextAfter: string | null }>(apiPath('admin', 'providers', provider, 'trip', 'vehicles'), {
            limit: PAGE,
            ...(after === null ? {} : { after }),
          }),
    [provider, version, after],
    POLL_MS,
  );
  const nextAfter = vehicles.data?.nextAfter ?? null;
  const refresh = (): void => setVersion((v) => v + 1);
  const list = vehicles.data?.vehicles ?? [];

  const remove = (v: VehicleView): void => {
    void act(async () => {
      await api.send('DELETE', apiPath('admin', 'providers', provider, 'trip', 'vehicles', v.dominio));
      return t('vehicles.removed', { dominio: v.dominio, name: provider });
    }, refresh);
  };

  return (
    <div class="view" data-view="vehicles">
      <Section title={t('nav.vehicles')}>
        <form class="filters" onSubmit={(e) => e.preventDefault()}>
          <ProviderSelect
            name="provider"
            value={provider}
            onChange={(p) => {
              setProvider(p);
              setAfter(null);
            }}
          />
        </form>
        <ErrorLine error={vehicles.error} />
        {provider === '' ? (
          <p class="muted">{t('vehicles.choose')}</p>
        ) : (
          <>
            <Table
              loading={vehicles.data === null && vehicles.error === null}
              empty={list.length === 0}
              head={[t('common.dominio'), t('common.nroSerie'), t('vehicles.registeredAt'), t('vehicles.lastReport'), allows('removeVehicle') ? t('common.actions') : null]}
              rows={list.map((v) => (
                <tr key={v.dominio} data-vehicle={v.dominio}>
                  <td>{v.dominio}</td>
                  <td>{v.nroSerie}</td>
                  <td><Time iso={v.registeredAt} /></td>
                  <td class="last-report"><Time iso={v.lastReport} /></td>
                  {allows('removeVehicle') ? <td class="actions"><button type="button" class="danger" onClick={() => remove(v)}>{t('vehicles.remove')}</button></td> : null}
                </tr>
              ))}
            />
            <div class="pager">
              {after === null ? null : <button type="button" onClick={() => setAfter(null)}>{t('common.firstPage')}</button>}
              {nextAfter === null ? null : <button type="button" data-next-page onClick={() => setAfter(nextAfter)}>{t('common.nextPage')}</button>}
            </div>
            {allows('registerVehicle') ? <RegisterVehicle provider={provider} onRegistered={refresh} /> : null}
          </>
        )}
      </Section>
    </div>
  );
}

function RegisterVehicle({ provider, onRegistered }: { provider: string; onRegistered: () => void }) {
  const { api, t } = useConsole();
  const act = useAction();
  const [dominio, setDominio] = useState('');
  const [nroSerie, setNroSerie] = useState('');
  return (
    <>
      <h3>{t('vehicles.register')}</h3>
      <form
        class="inline-form"
        name="register-vehicle"
        onSubmit={(e) => {
          e.preventDefault();
          const d = dominio.trim();
          void act(async () => {
            await api.send('PUT', apiPath('admin', 'providers', provider, 'trip', 'vehicles', d), { nroSerie: nroSerie.trim() });
            return t('vehicles.registered', { dominio: d, name: provider });
          }, () => {
            setDominio('');
            setNroSerie('');
            onRegistered();
          });
        }}
      >
        <label><span>{t('common.dominio')}</span><input name="dominio" required value={dominio} onInput={(e) => setDominio(e.currentTarget.value)} /></label>
        <label><span>{t('common.nroSerie')}</span><input name="nroSerie" required value={nroSerie} onInput={(e) => setNroSerie(e.currentTarget.value)} /></label>
        <button type="submit">{t('vehicles.submit')}</button>
      </form>
    </>
  );
}
