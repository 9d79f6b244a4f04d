import type { Role } from '../../shared/backends/operators.js';
import type { Backends, Provider } from '../../shared/backends/types.js';
import type { PlainReply } from '../../shared/runtime/http-reply.js';
import type { Config } from '../../shared/config/index.js';
import type { Logger } from '../../shared/runtime/logger.js';
import type { Principal } from './access.js';
import type { CallAudit } from './audit-trail.js';
import { notFound } from './http.js';
import { commandRoutes } from './routes/commands.js';
import { eventRoutes } from './routes/events.js';
import { importRoutes } from './routes/import.js';
import { mapRoutes } from './routes/map.js';
import { operationRoutes } from './routes/operations.js';
import { operatorRoutes } from './routes/operators.js';
import { providerRoutes } from './routes/providers.js';
import { tripRoutes } from './routes/trips.js';
import type { StreamHub, StreamTicket } from './stream-hub.js';
import type { Refusal } from '../service/refusals.js';

/** What the admin routes work with. */
export interface AdminDeps {
  config: Config;
  backends: Backends;
  logger: Logger;
  clock: () => number;
  /** The live event streams (one feed subscription for all). */
  streams: StreamHub;
  metrics?: () => Promise<string>;
  /** 'embedded' or 'scale-out' as the overview reports it. */
  mode: 'embedded' | 'scale-out';
  /** The route keys a role may call (roles.ts), for GET /admin/whoami. */
  allowedFor(role: Role): string[];
  /** The gateway's latest refusals of providers' calls, every front-end thread's (gateway/service/refusals.ts). */
  refusals?: (systemUser: string | undefined, limit: number) => Promise<Refusal[]>;
}

export interface RouteRequest {
  /** Decoded path parameters (`:systemUser`, `:dominio`). */
  params: Record<string, string>;
  query: URLSearchParams;
  /** The JSON object body (read on demand; 400/413 when it is not one). */
  body(): Promise<Record<string, unknown>>;
  /** Who is calling; null only on the public routes. */
  principal: Principal | null;
  /** This call's audit entry in the making: a handler sets `target` or `detail` when the path alone does not say. */
  audit: CallAudit;
}

/** A Server-Sent Events answer: a place among the live streams, attached to the response by the server. */
export type Reply = PlainReply | { status: 200; stream: StreamTicket };

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type Handler = (req: RouteRequest) => Promise<Reply>;

export interface Route {
  /** Literal segments and `:name` parameters, e.g. ['admin', 'providers', ':systemUser']. */
  pattern: readonly string[];
  /** Reachable without the bearer token (liveness/readiness probes). */
  public?: boolean;
  /** Largest body this route reads (default BODY_LIMIT_BYTES). */
  bodyLimit?: number;
  handlers: Partial<Record<Method, Handler>>;
}

export const param = (req: RouteRequest, name: string): string => req.params[name] ?? '';

/** The provider, or a 404 naming it. */
export async function providerOr404(backends: Backends, systemUser: string): Promise<Provider> {
  const provider = await backends.providers.get(systemUser);
  if (provider === null) throw notFound(`Provider "${systemUser}" not found.`);
  return provider;
}

/** Path prefix of one provider's routes. */
export const PROVIDER = ['admin', 'providers', ':systemUser'] as const;

export function adminRoutes(deps: AdminDeps): Route[] {
  return [...operationRoutes(deps), ...providerRoutes(deps), ...commandRoutes(deps), ...tripRoutes(deps), ...eventRoutes(deps), ...importRoutes(deps), ...mapRoutes(deps), ...operatorRoutes(deps)];
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
