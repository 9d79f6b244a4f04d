/**
 * A clock every thread of a gateway reads: epoch milliseconds in a SharedArrayBuffer that whoever
 * owns the clock moves (tests travel in time with it). The service runs on Date.now and needs
 * none of this. Atomics keep a read from seeing half of a write.
 */
export class SharedClock {
  private constructor(readonly cell: BigInt64Array) {}

  static create(startMs: number): SharedClock {
    const clock = new SharedClock(new BigInt64Array(new SharedArrayBuffer(BigInt64Array.BYTES_PER_ELEMENT)));
    clock.set(startMs);
    return clock;
  }

  /** The same clock, seen from another thread (its cell arrived in workerData). */
  static attach(cell: BigInt64Array): SharedClock {
    return new SharedClock(cell);
  }

  readonly now = (): number => Number(Atomics.load(this.cell, 0));

  /** Whole milliseconds (a fraction is a RangeError). */
  set(ms: number): void {
    Atomics.store(this.cell, 0, BigInt(ms));
  }
}
