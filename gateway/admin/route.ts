import type { Role } from '../../shared/backends/operators.js';
import type { Backends, Provider } from '../../shared/backends/types.js';
import type { Config } from '../../shared/config/index.js';
import type { PlainReply } from '../../shared/runtime/http-reply.js';
import type { Logger } from '../../shared/runtime/logger.js';
import type { Refusal } from '../service/refusals.js';
import type { Principal } from './access.js';
import type { CallAudit } from './audit-trail.js';
import { AdminError } from './errors.js';
import type { StreamHub, StreamTicket } from './stream-hub.js';

/**
 * What an admin route is made of, for the route files (routes/*.ts) and the server alike: each
 * route declares, beside each method's handler, the role that method needs (roles.ts says what
 * each role is, and derives the route table from these declarations).
 */

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

/** Who may call a method: at least this role, or anyone (`public`: the probes, without a token). */
export type Access = Role | 'public';

/** One method of a route: the role it needs, declared where the handler is, and the handler. */
export interface RouteMethod {
  readonly role: Access;
  readonly run: Handler;
}

export interface Route {
  /** Literal segments and `:name` parameters, e.g. ['admin', 'providers', ':systemUser']. */
  pattern: readonly string[];
  /** Largest body this route reads (default BODY_LIMIT_BYTES). */
  bodyLimit?: number;
  handlers: Partial<Record<Method, RouteMethod>>;
}

export const param = (req: RouteRequest, name: string): string => req.params[name] ?? '';

/** The provider, or a 404 naming it. */
export async function providerOr404(backends: Backends, systemUser: string): Promise<Provider> {
  const provider = await backends.providers.get(systemUser);
  if (provider === null) throw AdminError.of('providerNotFound', { systemUser });
  return provider;
}

/** Path prefix of one provider's routes. */
export const PROVIDER = ['admin', 'providers', ':systemUser'] as const;
