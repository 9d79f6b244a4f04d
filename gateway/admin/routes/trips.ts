import { MAX_LENGTH } from '../../../shared/catalogue/index.js';
import { AdminError } from '../errors.js';
import { param, PROVIDER, providerOr404, type AdminDeps, type Handler, type Route } from '../route.js';
import { dominioOf, limitOf, onlyFields, onlyQueryParams, requiredText } from '../validate.js';
import { vehicleView } from '../views.js';

export function tripRoutes(deps: AdminDeps): Route[] {
  const { backends, clock, logger: log } = deps;

  /** One page in code point order of Dominio; `nextAfter` continues it (null when the page was not full). */
  const listVehicles: Handler = async (req) => {
    const systemUser = param(req, 'systemUser');
    onlyQueryParams(req.query, ['limit', 'after']);
    const limit = limitOf(req.query.get('limit'));
    const after = req.query.get('after');
    await providerOr404(backends, systemUser);
    const vehicles = await backends.trips.pageVehicles(systemUser, { limit, ...(after === null || after === '' ? {} : { afterDominio: after }) });
    const last = vehicles[vehicles.length - 1];
    const nextAfter = vehicles.length === limit && last !== undefined ? last.dominio : null;
    return { status: 200, json: { vehicles: vehicles.map(vehicleView), nextAfter } };
  };

  const putVehicle: Handler = async (req) => {
    const systemUser = param(req, 'systemUser');
    const dominio = param(req, 'dominio');
    const body = await req.body();
    onlyFields(body, ['nroSerie']);
    const nroSerie = requiredText(body, 'nroSerie', MAX_LENGTH.nroSerie);
    dominioOf(dominio);
    await providerOr404(backends, systemUser);
    const existed = await backends.trips.isRegistered(systemUser, dominio);
    await backends.trips.addVehicle(systemUser, dominio, nroSerie, clock());
    const vehicle = await backends.trips.getVehicle(systemUser, dominio);
    if (vehicle === null) throw new Error(`Vehicle ${dominio} vanished right after being registered.`);
    log.info({ systemUser, dominio, nroSerie, reRegistered: existed }, 'admin: vehicle registered on trip');
    return { status: existed ? 200 : 201, json: vehicleView(vehicle) };
  };

  const deleteVehicle: Handler = async (req) => {
    const systemUser = param(req, 'systemUser');
    const dominio = param(req, 'dominio');
    await providerOr404(backends, systemUser);
    if (!(await backends.trips.removeVehicle(systemUser, dominio))) throw AdminError.of('vehicleNotOnTrip', { dominio, systemUser });
    log.info({ systemUser, dominio }, 'admin: vehicle removed from trip');
    return { status: 204 };
  };

  return [
    { pattern: [...PROVIDER, 'trip', 'vehicles'], handlers: { GET: { role: 'viewer', run: listVehicles } } },
    { pattern: [...PROVIDER, 'trip', 'vehicles', ':dominio'], handlers: { PUT: { role: 'operator', run: putVehicle }, DELETE: { role: 'operator', run: deleteVehicle } } },
  ];
}
