/**
 * The key layout (shared/backends/redis/keys.ts): every key of a provider in one hash slot, its
 * sessions in that slot too, the cross-provider families each in a slot of its own, and no two
 * families able to produce the same key whatever a SystemUser holds.
 */
import { describe, expect, it } from 'vitest';
import { OperatorKeys, RedisKeys } from '../../../../../shared/backends/redis/keys.js';
import { hashSlot } from '../../../../../shared/backends/redis/slots.js';
import { newSessionId, stampSessionId } from '../../../../../shared/domain/session-ids.js';

const k = new RedisKeys('gw:');

function providerKeys(u: string): string[] {
  return [
    k.provider(u),
    k.lockout(u),
    k.sessionIndex(u),
    k.commandsOpen(u),
    k.commandsExpiry(u),
    k.commandsAll(u),
    k.command(u, 7),
    k.commandHistory(u, 7),
    k.trip(u),
    k.tripIndex(u),
    k.lastReports(u),
    k.dedupe(u, 'AbC+/='),
  ];
}

describe('RedisKeys (layout 2)', () => {
  it("puts every key of one provider in one hash slot, whatever its SystemUser holds", () => {
    for (const u of ['acme', 'x:y', 'a}b', '{tag}', 'ñandú "q" \\', '}', '']) {
      const slots = new Set(providerKeys(u).map(hashSlot));
      expect(slots.size, u).toBe(1);
      expect(k.providerSlot(u)).toBe(hashSlot(k.provider(u)));
    }
    expect(k.provider('acme')).toBe('gw:{u:acme}:provider');
  });

  it("finds a session's key from its id alone, in the slot the id carries", () => {
    const id = stampSessionId(newSessionId(), k.providerSlot('acme'));
    expect(hashSlot(k.session(id))).toBe(k.providerSlot('acme'));
    // The spare top bit of the stamp does not move the slot.
    const other = stampSessionId(id, k.providerSlot('acme') + 16384);
    expect(hashSlot(k.session(other))).toBe(k.providerSlot('acme'));
  });

  it('gives each cross-provider family a slot of its own', () => {
    const ops = new OperatorKeys('gw:');
    expect(hashSlot(k.providers())).toBe(hashSlot('{g:providers}'));
    expect(new Set([ops.token('n'), ops.tokenByHash('h'), ops.tokens()].map(hashSlot)).size).toBe(1);
    expect(new Set([ops.audit('seq'), ops.audit('entries'), ops.audit('identity:who}ever'), ops.audit('scope:provider/a{b}')].map(hashSlot)).size).toBe(1);
    expect(new Set([k.commandSeq(), k.commandOwners()].map(hashSlot)).size).toBe(1);
    expect(new Set([k.poison(), k.poisonIndex()].map(hashSlot)).size).toBe(1);
  });

  it('no SystemUser, session id or family name makes two families collide', () => {
    const all = new Set<string>();
    const add = (key: string): void => {
      expect(all.has(key), key).toBe(false);
      all.add(key);
    };
    // SystemUsers chosen to look like the other kinds of tag.
    for (const u of ['g:providers', 's:0', 'providers}:all', 'u:x']) for (const key of providerKeys(u)) add(key);
    const ops = new OperatorKeys('gw:');
    for (const key of [k.providers(), k.lockoutIndex(), k.commandSeq(), k.commandOwners(), k.poison(), k.poisonIndex(), k.idBlocksChecked(), k.layout(), k.layoutLock(), ops.tokens(), ops.audit('seq'), ops.guess('127.0.0.1')]) add(key);
    add(k.session(stampSessionId(newSessionId(), 0)));
  });

  it('refuses a prefix with a brace: it would be every key\'s hash tag', () => {
    expect(() => new RedisKeys('gw{x}:')).toThrow(/must not contain \{ or \}/);
  });
});
