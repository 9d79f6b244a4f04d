import {
  auditTarget,
  type AuditDetail,
  type AuditOutcome,
  type AuditRecord,
  type AuditStore,
} from '../../shared/backends/operators.js';
import type { Logger } from '../../shared/runtime/logger.js';
import type { Principal } from './access.js';
import { errorMessage } from '../../shared/util/error-message.js';

/** What one admin call leaves in the audit trail, filled in as the call goes (server.ts, handlers). */
export interface CallAudit {
  /** Whether this call is recorded: every mutating call, every refused one. */
  recorded: boolean;
  principal: Principal | null;
  method: string;
  /** The route's `METHOD /pattern`, or the method and path when none matched. */
  route: string;
  /** Set from the path's parameters; a handler names it when the body does (a created provider). */
  target: string | null;
  /** Names of the fields the body sent; a handler may say more precisely. */
  changes: string[] | null;
  detail: AuditDetail | null;
}

/** Field names kept per entry at most, and their length: a body's junk cannot bloat the trail. */
const MAX_CHANGES = 32;
const MAX_NAME = 64;
const MAX_ROUTE = 200;

export function newCallAudit(method: string, rawPath: string): CallAudit {
  return { recorded: false, principal: null, method, route: `${method} ${rawPath}`.slice(0, MAX_ROUTE), target: null, changes: null, detail: null };
}

/** The target a route's path parameters name: a provider, its command or vehicle, a token, a poison message. */
export function targetOfParams(params: Record<string, string>): string | null {
  const { systemUser, numero, dominio, name, id } = params;
  if (systemUser !== undefined) {
    if (numero !== undefined) return auditTarget('provider', systemUser, 'command', numero);
    if (dominio !== undefined) return auditTarget('provider', systemUser, 'vehicle', dominio);
    return auditTarget('provider', systemUser);
  }
  if (name !== undefined) return auditTarget('token', name);
  if (id !== undefined) return auditTarget('poison', id);
  return null;
}

/** The field names of a JSON body, bounded. */
export function fieldNames(body: Record<string, unknown>): string[] {
  return Object.keys(body)
    .slice(0, MAX_CHANGES)
    .map((k) => k.slice(0, MAX_NAME));
}

function outcomeOf(status: number): AuditOutcome {
  if (status === 401 || status === 403 || status === 429) return 'refused';
  return status < 400 ? 'ok' : 'failed';
}

/** Retention runs this often, dropping at most BATCH entries a call and BATCHES calls a run. */
const RETENTION_EVERY_MS = 60_000;
const BATCH = 500;
const BATCHES = 20;

interface AuditTrailOptions {
  store: AuditStore;
  logger: Logger;
  retentionMs: number;
  clock: () => number;
}

/**
 * Writes each recorded call to the audit store and, as a structured line (`msg: "admin audit"`,
 * the entry under `audit`), to the log for a SIEM. The entry is stored before the call is answered;
 * when the store cannot take it the answer still goes out (the change was made) and the log line
 * says the entry is missing from the store. Retention drops old entries in small batches.
 */
export class AuditTrail {
  private readonly logger: Logger;
  private readonly timer: NodeJS.Timeout;
  private sweeping: Promise<void> | null = null;

  constructor(private readonly options: AuditTrailOptions) {
    this.logger = options.logger.child({ component: 'audit' });
    this.timer = setInterval(() => void this.applyRetention(), RETENTION_EVERY_MS);
    this.timer.unref();
  }

  /** Warns, once at start, when the store could lose entries if it restarts. */
  async checkDurability(): Promise<void> {
    try {
      const problem = (await this.options.store.durability?.()) ?? null;
      if (problem !== null) this.logger.warn({ problem }, `admin audit: ${problem}`);
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, 'admin audit: could not tell whether the store persists the trail');
    }
  }

  async record(call: CallAudit, status: number, address: string, requestId: string): Promise<void> {
    const record: AuditRecord = {
      at: this.options.clock(),
      identity: call.principal?.identity ?? null,
      role: call.principal?.role ?? null,
      address,
      method: call.method,
      route: call.route,
      target: call.target,
      status,
      outcome: outcomeOf(status),
      changes: call.changes ?? [],
      detail: call.detail,
      requestId,
    };
    let stored = true;
    try {
      await this.options.store.append(record);
    } catch (err) {
      stored = false;
      this.logger.error({ err: errorMessage(err), requestId }, 'admin audit: the entry could not be stored; this log line is its only record');
    }
    this.logger.info({ audit: { ...record, at: new Date(record.at).toISOString() }, stored }, 'admin audit');
  }

  /** One retention run (also called by tests); runs never overlap. */
  applyRetention(): Promise<void> {
    this.sweeping ??= (async () => {
      try {
        const olderThan = this.options.clock() - this.options.retentionMs;
        for (let i = 0; i < BATCHES; i++) if ((await this.options.store.expire(olderThan, BATCH)) < BATCH) break;
      } catch (err) {
        this.logger.warn({ err: errorMessage(err) }, 'admin audit: retention could not run; it is tried again in a minute');
      } finally {
        this.sweeping = null;
      }
    })();
    return this.sweeping;
  }

  close(): void {
    clearInterval(this.timer);
  }
}
