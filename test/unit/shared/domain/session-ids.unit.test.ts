import { describe, expect, it } from 'vitest';
import { isSessionId, MAX_SESSION_STAMP, newSessionId, sessionIdStamp, stampSessionId } from '../../../../shared/domain/session-ids.js';

describe('session ids', () => {
  it('are 24 characters of [a-z0-5], and differ', () => {
    const ids = new Set(Array.from({ length: 2000 }, newSessionId));
    expect(ids.size).toBe(2000);
    for (const id of ids) expect(isSessionId(id)).toBe(true);
    expect(isSessionId(null)).toBe(false);
    expect(isSessionId('ABCDEFGHIJKLMNOPQRSTUVWX')).toBe(false);
  });

  it('carry a 15-bit stamp in their last three characters, keeping the format and the rest', () => {
    for (const stamp of [0, 1, 31, 32, 16383, 16384, MAX_SESSION_STAMP]) {
      const id = newSessionId();
      const stamped = stampSessionId(id, stamp);
      expect(isSessionId(stamped)).toBe(true);
      expect(stamped.slice(0, 21)).toBe(id.slice(0, 21));
      expect(sessionIdStamp(stamped)).toBe(stamp);
    }
    expect(() => stampSessionId(newSessionId(), MAX_SESSION_STAMP + 1)).toThrow(RangeError);
    expect(() => stampSessionId('short', 1)).toThrow(RangeError);
  });
});
