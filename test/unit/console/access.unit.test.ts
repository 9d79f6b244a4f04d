/** What the console offers per role and how it tells an audit entry (console/src/access.ts). */
import { describe, expect, it } from 'vitest';
import { ACTIONS, allows, describeEntry, type AuditEntryView, type Me } from '../../../console/src/access.js';
import { translate } from '../../../console/src/i18n.js';
import { ROUTE_TABLE } from '../../helpers/admin-routes.js';

const entry = (extra: Partial<AuditEntryView>): AuditEntryView => ({
  id: 1,
  at: '2026-11-27T10:02:00.000Z',
  identity: 'ana',
  role: 'admin',
  address: '127.0.0.1',
  method: 'PATCH',
  route: 'PATCH /admin/providers/:systemUser',
  target: 'provider/acme',
  status: 200,
  outcome: 'ok',
  changes: ['password'],
  detail: null,
  requestId: 'r',
  ...extra,
});

describe('console access', () => {
  it("names only routes of the server's table, and offers an action only when whoami lists its route", () => {
    for (const key of Object.values(ACTIONS)) expect([...ROUTE_TABLE.keys()], key).toContain(key);
    const viewer: Me = { identity: 'vera', role: 'viewer', kind: 'token', expiresAt: null, routes: ['GET /admin/providers'] };
    expect(allows(viewer, 'changeProvider')).toBe(false);
    expect(allows({ ...viewer, routes: [ACTIONS.changeProvider] }, 'changeProvider')).toBe(true);
  });

  it('tells an entry as a sentence in either language, the route itself when refused or unknown', () => {
    const en = (key: Parameters<typeof translate>[1], vars?: Parameters<typeof translate>[2]) => translate('en', key, vars);
    const es = (key: Parameters<typeof translate>[1], vars?: Parameters<typeof translate>[2]) => translate('es', key, vars);
    expect(describeEntry(entry({}), en)).toBe('password changed');
    expect(describeEntry(entry({}), es)).toBe('cambió password');
    expect(describeEntry(entry({ route: ACTIONS.cancelCommand, target: 'provider/acme/command/17', changes: [] }), en)).toBe('command 17 cancelled');
    expect(describeEntry(entry({ route: ACTIONS.registerVehicle, target: 'provider/acme/vehicle/AB%2F1' }), en)).toBe('vehicle AB/1 registered on the trip');
    expect(describeEntry(entry({ outcome: 'refused', status: 403, changes: [] }), en)).toBe('refused (403): PATCH /admin/providers/:systemUser');
    expect(describeEntry(entry({ route: ACTIONS.deleteProvider, outcome: 'failed', status: 400 }), en)).toBe('failed (400): DELETE /admin/providers/:systemUser');
    expect(describeEntry(entry({ route: 'POST /admin/import/trips' }), en)).toBe('POST /admin/import/trips');
  });
});
