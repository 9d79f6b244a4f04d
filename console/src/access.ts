/**
 * Who is signed in and what they may do, as GET /admin/whoami says: the console offers an action
 * only when its route is among the identity's routes (the server's table, gateway/admin/roles.ts,
 * decides; the console only stops offering what would be refused). Free of DOM globals so it is
 * unit-tested in Node.
 */
import type { MessageKey, Translate } from './i18n.js';

export type Role = 'viewer' | 'operator' | 'admin';

export interface Me {
  identity: string;
  role: Role;
  kind: 'bootstrap' | 'token';
  expiresAt: string | null;
  /** `METHOD /pattern` of every route this identity may call. */
  routes: string[];
}

/** The routes behind the console's actions. */
export const ACTIONS = {
  createProvider: 'POST /admin/providers',
  changeProvider: 'PATCH /admin/providers/:systemUser',
  deleteProvider: 'DELETE /admin/providers/:systemUser',
  liftLockouts: 'DELETE /admin/providers/:systemUser/lockouts',
  queueCommand: 'POST /admin/providers/:systemUser/commands',
  cancelCommand: 'POST /admin/providers/:systemUser/commands/:numero/cancel',
  registerVehicle: 'PUT /admin/providers/:systemUser/trip/vehicles/:dominio',
  removeVehicle: 'DELETE /admin/providers/:systemUser/trip/vehicles/:dominio',
  providerHistory: 'GET /admin/providers/:systemUser/audit',
  audit: 'GET /admin/audit',
} as const;

export type Action = keyof typeof ACTIONS;

export function allows(me: Me, action: Action): boolean {
  return me.routes.includes(ACTIONS[action]);
}

export interface AuditEntryView {
  id: number;
  at: string;
  identity: string | null;
  role: Role | null;
  address: string;
  method: string;
  route: string;
  target: string | null;
  status: number;
  outcome: 'ok' | 'failed' | 'refused';
  changes: string[];
  detail: Record<string, string | number | boolean | null> | null;
  requestId: string;
}

/** The last part of a target (`provider/acme/command/17` → `17`), decoded. */
function lastPart(target: string | null): string {
  const parts = (target ?? '').split('/');
  try {
    return decodeURIComponent(parts[parts.length - 1] ?? '');
  } catch {
    return parts[parts.length - 1] ?? '';
  }
}

const SENTENCES: Partial<Record<string, MessageKey>> = {
  [ACTIONS.createProvider]: 'audit.did.createProvider',
  [ACTIONS.deleteProvider]: 'audit.did.deleteProvider',
  [ACTIONS.liftLockouts]: 'audit.did.liftLockouts',
  [ACTIONS.queueCommand]: 'audit.did.queueCommand',
  [ACTIONS.cancelCommand]: 'audit.did.cancelCommand',
  [ACTIONS.registerVehicle]: 'audit.did.registerVehicle',
  [ACTIONS.removeVehicle]: 'audit.did.removeVehicle',
  'POST /admin/tokens': 'audit.did.createToken',
  'DELETE /admin/tokens/:name': 'audit.did.revokeToken',
};

/** What an entry did, in the operator's language: "password changed", "command 17 cancelled"; the route when it was refused or failed, or there is no sentence for it. */
export function describeEntry(e: AuditEntryView, t: Translate): string {
  let what: string;
  if (e.route === ACTIONS.changeProvider) what = t('audit.did.changeProvider', { fields: e.changes.join(', ') });
  else {
    const key = SENTENCES[e.route];
    what = key === undefined ? e.route : t(key, { name: lastPart(e.target) });
  }
  // Nothing (or not all) happened: the route says best what was tried.
  if (e.outcome === 'refused') return t('audit.refused', { what: e.route, status: e.status });
  if (e.outcome === 'failed') return t('audit.failed', { what: e.route, status: e.status });
  return what;
}
