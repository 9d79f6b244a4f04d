import { auditTarget } from '../../../shared/backends/operators.js';
import { hashPassword } from '../../../shared/domain/passwords.js';
import { AdminError, invalid, quotedList } from '../errors.js';
import { param, PROVIDER, providerOr404, type AdminDeps, type Handler, type Route } from '../route.js';
import { onlyFields, onlyQueryParams, optionalBoolean, passwordOf, requiredString, systemUserOf, timeZoneOf } from '../validate.js';
import { lockoutView, providerView } from '../views.js';

export function providerRoutes(deps: AdminDeps): Route[] {
  const { config, backends, clock, logger: log } = deps;

  const createProvider: Handler = async (req) => {
    const body = await req.body();
    onlyFields(body, ['systemUser', 'password', 'timeZone', 'requireRegisteredVehicles', 'enabled']);
    const systemUser = systemUserOf(requiredString(body, 'systemUser'));
    req.audit.target = auditTarget('provider', systemUser);
    const password = passwordOf(body, config.logins.passwordMinLength);
    const timeZone = body.timeZone === undefined ? null : timeZoneOf(body.timeZone);
    const requireRegisteredVehicles = optionalBoolean(body, 'requireRegisteredVehicles') ?? false;
    const enabled = optionalBoolean(body, 'enabled') ?? true;
    const conflict = (): AdminError => AdminError.of('providerExists', { systemUser });
    // Cheap check first, so a duplicate does not pay for a hash; create() settles races.
    if ((await backends.providers.get(systemUser)) !== null) throw conflict();
    const now = clock();
    const created = await backends.providers.create({
      systemUser,
      passwordHash: await hashPassword(password),
      enabled,
      timeZone,
      requireRegisteredVehicles,
      createdAt: now,
      updatedAt: now,
    });
    if (created === null) throw conflict();
    log.info({ systemUser, enabled, timeZone, requireRegisteredVehicles }, 'admin: provider created');
    return { status: 201, json: providerView(created) };
  };

  const listProviders: Handler = async () => {
    const providers = await backends.providers.list();
    return { status: 200, json: { providers: providers.map(providerView) } };
  };

  const showProvider: Handler = async (req) => ({
    status: 200,
    json: providerView(await providerOr404(backends, param(req, 'systemUser'))),
  });

  const updateProvider: Handler = async (req) => {
    const systemUser = param(req, 'systemUser');
    const body = await req.body();
    const fields = ['password', 'enabled', 'timeZone', 'requireRegisteredVehicles'] as const;
    onlyFields(body, fields);
    if (!fields.some((f) => body[f] !== undefined)) throw AdminError.of('nothingToUpdate', { fields: quotedList(fields) });
    const password = body.password === undefined ? undefined : passwordOf(body, config.logins.passwordMinLength);
    const enabled = optionalBoolean(body, 'enabled');
    const timeZone = body.timeZone === undefined ? undefined : timeZoneOf(body.timeZone);
    const requireRegisteredVehicles = optionalBoolean(body, 'requireRegisteredVehicles');
    await providerOr404(backends, systemUser);
    const updated = await backends.providers.update(
      systemUser,
      {
        ...(password === undefined ? {} : { passwordHash: await hashPassword(password) }),
        ...(enabled === undefined ? {} : { enabled }),
        ...(timeZone === undefined ? {} : { timeZone }),
        ...(requireRegisteredVehicles === undefined ? {} : { requireRegisteredVehicles }),
      },
      clock(),
    );
    if (updated === null) throw AdminError.of('providerNotFound', { systemUser });
    // An operator resetting a password means "let them in again": lift a lockout.
    if (password !== undefined) await backends.lockouts.clear(systemUser);
    log.info(
      { systemUser, passwordChanged: password !== undefined, enabled, timeZone, requireRegisteredVehicles },
      'admin: provider updated',
    );
    return { status: 200, json: providerView(updated) };
  };

  /**
   * The record goes first, so no new login can succeed; then its sessions end (a provider created
   * later under the same SystemUser must not inherit them), its unfinished commands are cancelled,
   * its trip is emptied and its lockouts lifted. Stored events are history and stay.
   */
  const deleteProvider: Handler = async (req) => {
    const systemUser = param(req, 'systemUser');
    onlyQueryParams(req.query, ['confirm']);
    if (req.query.get('confirm') !== systemUser) {
      throw invalid('confirm', `Deleting a provider needs ?confirm= with its SystemUser ("${systemUser}"), so a wrong path cannot delete another one.`);
    }
    await providerOr404(backends, systemUser);
    if (!(await backends.providers.delete(systemUser))) throw AdminError.of('providerNotFound', { systemUser });
    const now = clock();
    const sessionsEnded = await backends.sessions.endAll(systemUser, now);
    const commandsCancelled = await backends.commands.cancelAll(systemUser, now);
    const tripVehiclesRemoved = await backends.trips.clear(systemUser);
    await backends.lockouts.clear(systemUser);
    req.audit.detail = { sessionsEnded, commandsCancelled, tripVehiclesRemoved };
    log.info({ systemUser, sessionsEnded, commandsCancelled, tripVehiclesRemoved }, 'admin: provider deleted');
    return { status: 200, json: { deleted: systemUser, sessionsEnded, commandsCancelled, tripVehiclesRemoved } };
  };

  const listLockouts: Handler = async (req) => {
    onlyQueryParams(req.query, []);
    return { status: 200, json: { lockouts: (await backends.lockouts.list(clock())).map(lockoutView) } };
  };

  const liftLockouts: Handler = async (req) => {
    const systemUser = param(req, 'systemUser');
    await providerOr404(backends, systemUser);
    await backends.lockouts.clear(systemUser);
    log.info({ systemUser }, 'admin: lockouts lifted');
    return { status: 204 };
  };

  return [
    { pattern: ['admin', 'providers'], handlers: { GET: { role: 'viewer', run: listProviders }, POST: { role: 'admin', run: createProvider } } },
    {
      pattern: PROVIDER,
      handlers: { GET: { role: 'viewer', run: showProvider }, PATCH: { role: 'admin', run: updateProvider }, DELETE: { role: 'admin', run: deleteProvider } },
    },
    { pattern: ['admin', 'lockouts'], handlers: { GET: { role: 'viewer', run: listLockouts } } },
    { pattern: [...PROVIDER, 'lockouts'], handlers: { DELETE: { role: 'operator', run: liftLockouts } } },
  ];
}
