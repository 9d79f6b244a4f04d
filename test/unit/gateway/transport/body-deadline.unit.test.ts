/** BodyDeadlines on a clock of its own: the 16 KB/s rule over 10 s windows, and its bookkeeping. */
import { describe, expect, it } from 'vitest';
import { BODY_WINDOW_BYTES, BODY_WINDOW_MS, BodyDeadlines, type ArrivingBody } from '../../../../gateway/transport/body-deadline.js';

function body(): ArrivingBody & { dropped: number; done: boolean } {
  return {
    bodyWindowStart: 0,
    bodyWindowBytes: 0,
    bodyPrev: null,
    bodyNext: null,
    done: false,
    dropped: 0,
    drop() {
      this.dropped++;
    },
  };
}

describe('BodyDeadlines', () => {
  let now = 0;
  const deadlines = (): BodyDeadlines => {
    now = 1_000;
    return new BodyDeadlines(() => now);
  };

  it('drops a body that brings less than 160 KB in its first 10 s, once, and counts it', () => {
    const d = deadlines();
    let counted = 0;
    d.onDrop = () => counted++;
    const b = body();
    d.start(b);
    d.progress(b, BODY_WINDOW_BYTES - 1, false);
    now += BODY_WINDOW_MS - 1;
    d.sweep();
    expect(b.dropped).toBe(0);
    now += 1;
    d.sweep();
    d.sweep();
    expect(b.dropped).toBe(1);
    expect(counted).toBe(1);
    expect(d.size).toBe(0);
  });

  it('keeps a body that brings 160 KB in every window, however long it takes, and forgets it at its last byte', () => {
    const d = deadlines();
    const b = body();
    d.start(b);
    for (let window = 0; window < 5; window++) {
      d.progress(b, BODY_WINDOW_BYTES, false);
      now += BODY_WINDOW_MS;
      d.sweep();
    }
    expect(b.dropped).toBe(0);
    d.progress(b, 10, true);
    now += BODY_WINDOW_MS;
    d.sweep();
    expect(b.dropped).toBe(0);
    expect(d.size).toBe(0);
  });

  it('drops a body that never brings a byte, and lets go of requests that ended otherwise', () => {
    const d = deadlines();
    const silent = body();
    const answered = body();
    d.start(silent);
    d.start(answered);
    answered.done = true; // refused (too large) or aborted mid-body
    now += BODY_WINDOW_MS;
    d.sweep();
    expect(silent.dropped).toBe(1);
    expect(answered.dropped).toBe(0);
    expect(d.size).toBe(0);
  });

  it('keeps the list whole whichever body leaves first (head, middle, tail), and a body started twice is listed once', () => {
    const d = deadlines();
    const bodies = Array.from({ length: 5 }, () => body());
    for (const b of bodies) d.start(b);
    d.start(bodies[2]!);
    expect(d.size).toBe(5);
    // Listed newest first: 4 is the head, 0 the tail.
    for (const i of [4, 2, 0]) d.progress(bodies[i]!, 1, true);
    d.progress(bodies[2]!, 1, true);
    expect(d.size).toBe(2);
    // The two left still reach the sweep: both dropped after a silent window, nothing else.
    now += BODY_WINDOW_MS;
    d.sweep();
    expect(bodies.map((b) => b.dropped)).toEqual([0, 1, 0, 1, 0]);
    expect(d.size).toBe(0);
    // And the list starts again from empty.
    d.start(bodies[0]!);
    expect(d.size).toBe(1);
    d.progress(bodies[0]!, 1, true);
    expect(d.size).toBe(0);
  });

  it('drops every silent body of many, unlisting while it walks', () => {
    const d = deadlines();
    const bodies = Array.from({ length: 1000 }, () => body());
    for (const b of bodies) d.start(b);
    for (let i = 0; i < bodies.length; i += 3) bodies[i]!.done = true;
    now += BODY_WINDOW_MS;
    d.sweep();
    expect(bodies.filter((b) => b.dropped === 1)).toHaveLength(bodies.length - Math.ceil(bodies.length / 3));
    expect(bodies.every((b) => b.dropped <= 1 && b.bodyPrev === null && b.bodyNext === null)).toBe(true);
    expect(d.size).toBe(0);
  });
});
