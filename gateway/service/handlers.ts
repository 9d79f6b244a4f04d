import { type Args, type EventInput, type OperationName, type Operations, type Result } from '../../shared/catalogue/index.js';
import type { Backends } from '../../shared/backends/types.js';
import type { Config } from '../../shared/config/index.js';
import { formatInstant } from '../../shared/dotnet/timezone.js';
import type { Authenticator } from './auth.js';
import type { AuthenticatedCall, CallContext } from './context.js';
import { withExtras } from './event-record.js';
import type { EventIngest } from './ingest.js';
import type { RefusalNote } from './auth.js';
import type { RefusalLog } from './refusals.js';
import type { Sessions } from './sessions.js';

/**
 * One handler per action. The call pipeline (service.ts) has already applied the catalogue's
 * limits and resolved the provider (from the session or the credentials) when a handler runs, so
 * an operation and its Login-prefixed twin share one handler. The mapped type makes a missing
 * handler a compile error and derives each handler's arguments and result from the catalogue.
 */
type ContextOf<N extends OperationName> = Operations[N]['authentication'] extends 'none' ? CallContext : AuthenticatedCall;
export type Handler<N extends OperationName> = (args: Args<N>, ctx: ContextOf<N>) => Promise<Result<N>>;
export type Handlers = { [N in OperationName]: Handler<N> };

/** What the operation layer uses of the backends (all a front-end thread has of them, gateway/threads/). */
export type ServiceBackends = Pick<Backends, 'providers' | 'lockouts' | 'sessions' | 'commands' | 'trips' | 'eventLog'>;

interface HandlerDeps {
  backends: ServiceBackends;
  config: Config;
  auth: Authenticator;
  sessions: Sessions;
  ingest: EventIngest;
  /** Why a call was answered false (refusals.ts). */
  refusals: RefusalLog;
}

export function createHandlers({ backends, config, auth, sessions, ingest, refusals }: HandlerDeps): Handlers {
  /** `false`, kept in the refusal log with its reason. */
  const refused = (ctx: AuthenticatedCall, reason: string): false => {
    refusals.record(ctx.provider.systemUser, ctx, false, reason);
    return false;
  };

  const insertOne = (event: EventInput, ctx: AuthenticatedCall): Promise<number> =>
    ingest.insertOne(ctx, withExtras(event, ctx.extras));

  /** CambiarClave confirms AntiguaClave; its twin confirms the Password it logged in with (cached). */
  const changePassword = async (ctx: AuthenticatedCall, current: string | null, next: string | null): Promise<boolean> => {
    const note: RefusalNote = { reason: null };
    if (current === null) return refused(ctx, 'AntiguaClave is missing');
    if (!(await auth.confirmPassword(ctx.provider, current, ctx.now, ctx.clientAddress, note, ctx.deadline))) return refused(ctx, `AntiguaClave: ${note.reason ?? 'wrong password'}`);
    const problem = auth.passwordProblem(current, next);
    if (problem !== null) return refused(ctx, problem);
    return (await auth.changePassword(ctx.provider, current, next, ctx.now)) || refused(ctx, 'the provider was changed or deleted meanwhile');
  };

  const nextCommand = async (_args: unknown, ctx: AuthenticatedCall): Promise<Result<'ObtenerComando'>> => {
    const c = await backends.commands.deliverNext(ctx.provider.systemUser, ctx.now);
    return c === null ? null : { CMD: c.cmd, UNIDAD: c.unidad, EQUIPO: c.equipo, NUMERO: c.numero };
  };

  const notDelivered = (numero: number): string =>
    `NUMERO ${numero} is no command delivered to this provider and still open (unknown, not yet fetched with ObtenerComando, finished, cancelled or expired)`;

  const finish = async (a: { NUMERO: number; correcto: boolean }, ctx: AuthenticatedCall): Promise<boolean> =>
    (await backends.commands.finish(ctx.provider.systemUser, a.NUMERO, a.correcto, ctx.now)) !== 'rejected' || refused(ctx, notDelivered(a.NUMERO));

  const status = async (a: { NUMERO: number; MSG: string | null }, ctx: AuthenticatedCall): Promise<boolean> =>
    (await backends.commands.appendStatus(ctx.provider.systemUser, a.NUMERO, a.MSG ?? '', ctx.now)) || refused(ctx, notDelivered(a.NUMERO));

  return {
    async Login(_a, ctx) {
      ctx.newSessionId = await sessions.start(ctx.provider.systemUser, ctx.now);
      return true;
    },
    async Logout(_a, ctx) {
      return sessions.end(ctx.sessionId, ctx.now);
    },
    async InSession(_a, ctx) {
      return (await sessions.resolve(ctx.sessionId, ctx.now, ctx.deadline)) !== null;
    },

    CambiarClave: (a, ctx) => changePassword(ctx, a.AntiguaClave, a.NuevaClave),
    LoginYCambiarClave: (a, ctx) => changePassword(ctx, a.Password, a.NuevaClave),

    InsertarEvento: insertOne,
    LoginYInsertarEvento: insertOne,
    LoginYInsertarEvento2: insertOne,
    LoginYInsertarEventos: (a, ctx) => ingest.insert(ctx, a.Eventos ?? []),

    ObtenerComando: nextCommand,
    LoginYObtenerComando: nextCommand,
    ComandoProcesado: finish,
    LoginYComandoProcesado: finish,
    EstadoComando: status,
    LoginYEstadoComando: status,

    async ConsultarVehiculosEnViaje(_a, ctx) {
      const zone = ctx.provider.timeZone ?? config.service.timeZone;
      const vehicles = await backends.trips.listVehicles(ctx.provider.systemUser);
      return vehicles.map((v) => ({
        Dominio: v.dominio,
        NroSerie: v.nroSerie,
        FechaUltimoReporte: v.lastReport === null ? null : formatInstant(v.lastReport, zone),
        FechaRegistracion: formatInstant({ epochMs: v.registeredAt, subMsTicks: 0 }, zone),
      }));
    },
  };
}
