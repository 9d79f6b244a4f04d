import type { Backends, Provider } from '../../shared/backends/types.js';
import { MAX_LENGTH } from '../../shared/catalogue/index.js';
import type { Config } from '../../shared/config.js';
import { hashPassword } from '../../shared/domain/passwords.js';
import type { Logger } from '../../shared/logger.js';
import { HttpError, notFound, type JsonValue } from './http.js';
import {
  limitOf,
  onlyFields,
  onlyQueryParams,
  optionalBoolean,
  passwordOf,
  plainText,
  requiredString,
  requiredText,
  systemUserOf,
  timeZoneOf,
} from './validate.js';
import { commandView, eventView, providerView, vehicleView } from './views.js';

/** What the admin routes work with. */
export interface AdminDeps {
  config: Config;
  backends: Backends;
  logger: Logger;
  clock: () => number;
  metrics?: () => Promise<string>;
}

export interface RouteRequest {
  /** Decoded path parameters (`:systemUser`, `:dominio`). */
  params: Record<string, string>;
  query: URLSearchParams;
  /** The JSON object body (read on demand; 400/413 when it is not one). */
  body(): Promise<Record<string, unknown>>;
}

export type Reply =
  | { status: number; json: JsonValue }
  | { status: number; text: string; contentType?: string }
  | { status: 204 };

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type Handler = (req: RouteRequest) => Promise<Reply>;

export interface Route {
  /** Literal segments and `:name` parameters, e.g. ['admin', 'providers', ':systemUser']. */
  pattern: readonly string[];
  /** Reachable without the bearer token (liveness/readiness probes). */
  public?: boolean;
  handlers: Partial<Record<Method, Handler>>;
}

const param = (req: RouteRequest, name: string): string => req.params[name] ?? '';

export function adminRoutes(deps: AdminDeps): Route[] {
  const { config, backends, clock } = deps;
  const log = deps.logger;

  async function providerOr404(systemUser: string): Promise<Provider> {
    const provider = await backends.providers.get(systemUser);
    if (provider === null) throw notFound(`Provider "${systemUser}" not found.`);
    return provider;
  }

  const createProvider: Handler = async (req) => {
    const body = await req.body();
    onlyFields(body, ['systemUser', 'password', 'timeZone', 'requireRegisteredVehicles', 'enabled']);
    const systemUser = systemUserOf(requiredString(body, 'systemUser'));
    const password = passwordOf(body, config.passwordMinLength);
    const timeZone = body.timeZone === undefined ? null : timeZoneOf(body.timeZone);
    const requireRegisteredVehicles = optionalBoolean(body, 'requireRegisteredVehicles') ?? false;
    const enabled = optionalBoolean(body, 'enabled') ?? true;
    const conflict = (): HttpError => new HttpError(409, `Provider "${systemUser}" already exists.`, 'systemUser');
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
    json: providerView(await providerOr404(param(req, 'systemUser'))),
  });

  const updateProvider: Handler = async (req) => {
    const systemUser = param(req, 'systemUser');
    const body = await req.body();
    const fields = ['password', 'enabled', 'timeZone', 'requireRegisteredVehicles'] as const;
    onlyFields(body, fields);
    if (!fields.some((f) => body[f] !== undefined)) {
      throw new HttpError(400, `Nothing to update: give at least one of ${fields.map((f) => `"${f}"`).join(', ')}.`);
    }
    const password = body.password === undefined ? undefined : passwordOf(body, config.passwordMinLength);
    const enabled = optionalBoolean(body, 'enabled');
    const timeZone = body.timeZone === undefined ? undefined : timeZoneOf(body.timeZone);
    const requireRegisteredVehicles = optionalBoolean(body, 'requireRegisteredVehicles');
    await providerOr404(systemUser);
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
    if (updated === null) throw notFound(`Provider "${systemUser}" not found.`);
    // An operator resetting a password means "let them in again": lift a lockout.
    if (password !== undefined) await backends.lockouts.clear(systemUser);
    log.info(
      { systemUser, passwordChanged: password !== undefined, enabled, timeZone, requireRegisteredVehicles },
      'admin: provider updated',
    );
    return { status: 200, json: providerView(updated) };
  };

  const queueCommand: Handler = async (req) => {
    const systemUser = param(req, 'systemUser');
    const body = await req.body();
    onlyFields(body, ['cmd', 'unidad', 'equipo']);
    const cmd = requiredText(body, 'cmd', MAX_LENGTH.cmd);
    const unidad = requiredText(body, 'unidad', MAX_LENGTH.dominio);
    const equipo = requiredText(body, 'equipo', MAX_LENGTH.nroSerie);
    await providerOr404(systemUser);
    const now = clock();
    const command = await backends.commands.enqueue({
      systemUser,
      cmd,
      unidad,
      equipo,
      now,
      expiresAt: now + config.commandTtlMs,
    });
    log.info({ systemUser, numero: command.numero, cmd, unidad, equipo }, 'admin: command queued');
    return { status: 201, json: commandView(command) };
  };

  const listCommands: Handler = async (req) => {
    const systemUser = param(req, 'systemUser');
    await providerOr404(systemUser);
    const commands = await backends.commands.list(systemUser, clock());
    return { status: 200, json: { commands: commands.map(commandView) } };
  };

  const listVehicles: Handler = async (req) => {
    const systemUser = param(req, 'systemUser');
    await providerOr404(systemUser);
    const vehicles = await backends.trips.listVehicles(systemUser);
    return { status: 200, json: { vehicles: vehicles.map(vehicleView) } };
  };

  const putVehicle: Handler = async (req) => {
    const systemUser = param(req, 'systemUser');
    const dominio = param(req, 'dominio');
    const body = await req.body();
    onlyFields(body, ['nroSerie']);
    const nroSerie = requiredText(body, 'nroSerie', MAX_LENGTH.nroSerie);
    if (dominio.trim() === '') throw new HttpError(400, 'dominio must not be empty.', 'dominio');
    if (dominio.length > MAX_LENGTH.dominio) throw new HttpError(400, `dominio must be at most ${MAX_LENGTH.dominio} characters.`, 'dominio');
    plainText(dominio, 'dominio');
    await providerOr404(systemUser);
    const existed = await backends.trips.isRegistered(systemUser, dominio);
    await backends.trips.addVehicle(systemUser, dominio, nroSerie, clock());
    const vehicle = (await backends.trips.listVehicles(systemUser)).find((v) => v.dominio === dominio);
    if (vehicle === undefined) throw new Error(`Vehicle ${dominio} vanished right after being registered.`);
    log.info({ systemUser, dominio, nroSerie, reRegistered: existed }, 'admin: vehicle registered on trip');
    return { status: existed ? 200 : 201, json: vehicleView(vehicle) };
  };

  const deleteVehicle: Handler = async (req) => {
    const systemUser = param(req, 'systemUser');
    const dominio = param(req, 'dominio');
    await providerOr404(systemUser);
    if (!(await backends.trips.removeVehicle(systemUser, dominio))) {
      throw notFound(`Vehicle "${dominio}" is not on a trip of provider "${systemUser}".`);
    }
    log.info({ systemUser, dominio }, 'admin: vehicle removed from trip');
    return { status: 204 };
  };

  const listEvents: Handler = async (req) => {
    onlyQueryParams(req.query, ['provider', 'dominio', 'limit']);
    const provider = req.query.get('provider');
    const dominio = req.query.get('dominio');
    const limit = limitOf(req.query.get('limit'));
    const events = await backends.events.recent({
      limit,
      ...(provider ? { provider } : {}),
      ...(dominio ? { dominio } : {}),
    });
    return { status: 200, json: { events: events.map(eventView) } };
  };

  const healthz: Handler = async () => ({ status: 200, json: { status: 'ok' } });

  const readyz: Handler = async () => {
    let ready = false;
    try {
      ready = await backends.healthy();
    } catch (err) {
      log.warn({ err }, 'admin: health check of the backends failed');
    }
    const json: JsonValue = ready ? { status: 'ok' } : { status: 'unavailable', error: 'Backends are not healthy.' };
    return { status: ready ? 200 : 503, json };
  };

  const metrics: Handler = async () => {
    if (deps.metrics === undefined) throw notFound('Metrics are not enabled.');
    return { status: 200, text: await deps.metrics(), contentType: 'text/plain; version=0.0.4; charset=utf-8' };
  };

  const provider = ['admin', 'providers', ':systemUser'] as const;
  return [
    { pattern: ['healthz'], public: true, handlers: { GET: healthz } },
    { pattern: ['readyz'], public: true, handlers: { GET: readyz } },
    { pattern: ['metrics'], handlers: { GET: metrics } },
    { pattern: ['admin', 'providers'], handlers: { GET: listProviders, POST: createProvider } },
    { pattern: provider, handlers: { GET: showProvider, PATCH: updateProvider } },
    { pattern: [...provider, 'commands'], handlers: { GET: listCommands, POST: queueCommand } },
    { pattern: [...provider, 'trip', 'vehicles'], handlers: { GET: listVehicles } },
    { pattern: [...provider, 'trip', 'vehicles', ':dominio'], handlers: { PUT: putVehicle, DELETE: deleteVehicle } },
    { pattern: ['admin', 'events'], handlers: { GET: listEvents } },
  ];
}

/** Matches decoded path segments against a route pattern; the parameters, or null. */
export function matchRoute(pattern: readonly string[], segments: readonly string[]): Record<string, string> | null {
  if (pattern.length !== segments.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i] ?? '';
    const s = segments[i] ?? '';
    if (p.startsWith(':')) {
      if (s === '') return null;
      params[p.slice(1)] = s;
    } else if (p !== s) {
      return null;
    }
  }
  return params;
}
