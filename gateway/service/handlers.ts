import type { Args, OperationName, Result } from '../../shared/catalogue/index.js';
import type { Backends, Provider } from '../../shared/backends/types.js';
import type { Config } from '../../shared/config.js';
import { formatInstant } from '../../shared/xsd/timezone.js';
import type { Authenticator } from './auth.js';
import { Faults, type CallContext } from './context.js';
import { ResultCode, withExtras, type EventIngest } from './events.js';
import type { Sessions } from './sessions.js';

/**
 * One handler per catalogue operation; the mapped type makes a missing handler a compile error
 * and derives each handler's arguments and result from the catalogue.
 */
export type Handler<N extends OperationName> = (args: Args<N>, ctx: CallContext) => Promise<Result<N>>;
export type Handlers = { [N in OperationName]: Handler<N> };

export interface HandlerDeps {
  backends: Backends;
  config: Config;
  auth: Authenticator;
  sessions: Sessions;
  ingest: EventIngest;
}

export function createHandlers({ backends, config, auth, sessions, ingest }: HandlerDeps): Handlers {
  /** The enabled provider of the request's live session, or null. */
  const sessionProvider = async (ctx: CallContext): Promise<Provider | null> => {
    const systemUser = await sessions.resolve(ctx.sessionId, ctx.now);
    if (systemUser === null) return null;
    const provider = await backends.providers.get(systemUser);
    return provider?.enabled ? provider : null;
  };

  const nextCommand = async (provider: Provider, now: number): Promise<Result<'ObtenerComando'>> => {
    const c = await backends.commands.deliverNext(provider.systemUser, now);
    return c === null ? null : { CMD: c.cmd, UNIDAD: c.unidad, EQUIPO: c.equipo, NUMERO: c.numero };
  };

  const finish = async (provider: Provider, numero: number, correcto: boolean, now: number): Promise<boolean> =>
    (await backends.commands.finish(provider.systemUser, numero, correcto, now)) !== 'rejected';

  const status = (provider: Provider, numero: number, msg: string | null, now: number): Promise<boolean> =>
    backends.commands.appendStatus(provider.systemUser, numero, msg ?? '', now);

  return {
    async Login(a, ctx) {
      const provider = await auth.authenticate(a.SystemUser, a.Password, ctx.now);
      if (provider === null) return false;
      ctx.newSessionId = await sessions.start(provider.systemUser, ctx.now);
      return true;
    },
    async Logout(_a, ctx) {
      return sessions.end(ctx.sessionId, ctx.now);
    },
    async InSession(_a, ctx) {
      return (await sessions.resolve(ctx.sessionId, ctx.now)) !== null;
    },

    async CambiarClave(a, ctx) {
      const provider = await sessionProvider(ctx);
      if (provider === null || a.AntiguaClave === null) return false;
      if (!(await auth.confirmPassword(provider, a.AntiguaClave, ctx.now))) return false;
      return auth.changePassword(provider, a.AntiguaClave, a.NuevaClave, ctx.now);
    },
    async LoginYCambiarClave(a, ctx) {
      const provider = await auth.authenticate(a.SystemUser, a.Password, ctx.now);
      if (provider === null || a.Password === null) return false;
      return auth.changePassword(provider, a.Password, a.NuevaClave, ctx.now);
    },

    async InsertarEvento(a, ctx) {
      const provider = await sessionProvider(ctx);
      if (provider === null) return ResultCode.NoSession;
      const [code] = await ingest.insert(provider, [a], 'InsertarEvento', ctx.now);
      return code ?? ResultCode.Unavailable;
    },
    async LoginYInsertarEvento(a, ctx) {
      const provider = await auth.authenticate(a.SystemUser, a.Password, ctx.now);
      if (provider === null) return ResultCode.InvalidCredentials;
      const [code] = await ingest.insert(provider, [withExtras(a, ctx.extras)], 'LoginYInsertarEvento', ctx.now);
      return code ?? ResultCode.Unavailable;
    },
    async LoginYInsertarEvento2(a, ctx) {
      const provider = await auth.authenticate(a.SystemUser, a.Password, ctx.now);
      if (provider === null) return ResultCode.InvalidCredentials;
      const [code] = await ingest.insert(provider, [withExtras(a, ctx.extras)], 'LoginYInsertarEvento2', ctx.now);
      return code ?? ResultCode.Unavailable;
    },
    async LoginYInsertarEventos(a, ctx) {
      const events = a.Eventos ?? [];
      const provider = await auth.authenticate(a.SystemUser, a.Password, ctx.now);
      if (provider === null) return events.map(() => ResultCode.InvalidCredentials);
      return ingest.insert(provider, events, 'LoginYInsertarEventos', ctx.now);
    },

    async ObtenerComando(_a, ctx) {
      const provider = await sessionProvider(ctx);
      if (provider === null) throw Faults.noSession();
      return nextCommand(provider, ctx.now);
    },
    async LoginYObtenerComando(a, ctx) {
      const provider = await auth.authenticate(a.SystemUser, a.Password, ctx.now);
      if (provider === null) throw Faults.invalidCredentials();
      return nextCommand(provider, ctx.now);
    },
    async ComandoProcesado(a, ctx) {
      const provider = await sessionProvider(ctx);
      return provider !== null && finish(provider, a.NUMERO, a.correcto, ctx.now);
    },
    async LoginYComandoProcesado(a, ctx) {
      const provider = await auth.authenticate(a.SystemUser, a.Password, ctx.now);
      return provider !== null && finish(provider, a.NUMERO, a.correcto, ctx.now);
    },
    async EstadoComando(a, ctx) {
      const provider = await sessionProvider(ctx);
      return provider !== null && status(provider, a.NUMERO, a.MSG, ctx.now);
    },
    async LoginYEstadoComando(a, ctx) {
      const provider = await auth.authenticate(a.SystemUser, a.Password, ctx.now);
      return provider !== null && status(provider, a.NUMERO, a.MSG, ctx.now);
    },

    async ConsultarVehiculosEnViaje(a, ctx) {
      const provider = await auth.authenticate(a.SystemUser, a.Password, ctx.now);
      if (provider === null) throw Faults.invalidCredentials();
      const zone = provider.timeZone ?? config.timeZone;
      const vehicles = await backends.trips.listVehicles(provider.systemUser);
      return vehicles.map((v) => ({
        Dominio: v.dominio,
        NroSerie: v.nroSerie,
        FechaUltimoReporte: v.lastReport === null ? null : formatInstant(v.lastReport, zone),
        FechaRegistracion: formatInstant({ epochMs: v.registeredAt, subMsTicks: 0 }, zone),
      }));
    },
  };
}
