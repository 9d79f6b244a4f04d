/**
 * Redis Cluster's hash slots as this module computes them (the servers' own answers, CLUSTER
 * KEYSLOT, are compared in test/cluster/), and the per-slot tags sessions use.
 */
import { describe, expect, it } from 'vitest';
import { crc16, hashSlot, SLOTS, slotTag } from '../../../../../shared/backends/redis/slots.js';

describe('hash slots', () => {
  it('CRC16 is XMODEM: the check value of "123456789" is 0x31C3 (the cluster specification\'s)', () => {
    expect(crc16(Buffer.from('123456789'))).toBe(0x31c3);
  });

  it('hashes the text between the first { and the next }, when it is not empty; else the whole key', () => {
    expect(hashSlot('{user1000}.following')).toBe(hashSlot('{user1000}.followers'));
    expect(hashSlot('{user1000}.following')).toBe(hashSlot('user1000'));
    // An empty tag is no tag; only the first { counts, and the } after it.
    expect(hashSlot('foo{}{bar}')).toBe(crc16(Buffer.from('foo{}{bar}')) % SLOTS);
    expect(hashSlot('foo{{bar}}zap')).toBe(hashSlot('{bar'));
    expect(hashSlot('foo{bar}{zap}')).toBe(hashSlot('bar'));
    // UTF-8 bytes, as the server sees them.
    expect(hashSlot('{ñandú}:x')).toBe(crc16(Buffer.from('ñandú', 'utf8')) % SLOTS);
  });

  it('a tag for every slot, deterministic, each hashing to its slot', () => {
    const seen = new Set<string>();
    for (let slot = 0; slot < SLOTS; slot++) {
      const tag = slotTag(slot);
      expect(tag).toMatch(/^s:[0-9a-z]+$/);
      seen.add(tag);
      if (slot % 97 === 0) expect(hashSlot(`gw:{${tag}}:session:x`)).toBe(slot);
    }
    expect(seen.size).toBe(SLOTS);
    // The first of s:0, s:1, ... for its slot: the same in every process and release.
    expect(slotTag(hashSlot('{s:0}'))).toBe('s:0');
    expect(() => slotTag(SLOTS)).toThrow(RangeError);
  });
});
