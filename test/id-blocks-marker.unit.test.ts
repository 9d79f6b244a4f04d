/** The Redis marker of a checked id-blocks topic: a gateway finding another's check takes its floor. */
import { describe, expect, it } from 'vitest';
import { checkedMarker, floorCheckedBefore } from '../shared/backends/distributed-ids.js';

describe('the checked id-blocks topic marker', () => {
  it("takes the checker's floor when it is higher than the gateway's own", () => {
    const marker = checkedMarker('topic-B', 5_000n);
    // The race a CI run hit: the checker raised the floor and set the marker before any block
    // record carried it; a gateway still on floor 0 must not issue from 0.
    expect(floorCheckedBefore(marker, 'topic-B', 0n)).toBe(5_000n);
    expect(floorCheckedBefore(marker, 'topic-B', 9_000n)).toBe(9_000n);
    expect(floorCheckedBefore(checkedMarker('t', 2n ** 62n), 't', 1n)).toBe(2n ** 62n);
  });

  it('checks again for another topic, no marker, or a marker without a floor (an older release)', () => {
    expect(floorCheckedBefore(checkedMarker('topic-A', 5_000n), 'topic-B', 0n)).toBeNull();
    expect(floorCheckedBefore(null, 'topic-B', 0n)).toBeNull();
    expect(floorCheckedBefore('topic-B', 'topic-B', 0n)).toBeNull();
    expect(floorCheckedBefore('topic-B -1', 'topic-B', 0n)).toBeNull();
    expect(floorCheckedBefore('topic-B 12x', 'topic-B', 0n)).toBeNull();
  });
});
