/**
 * Puts `String.prototype` back in V8's fast-properties mode after the modules are loaded.
 *
 * Why: ioredis 6 declares `class VerbatimString extends String` (resp/verbatim-string.js), and
 * making an object the prototype of a new class lets V8 turn it into a dictionary ("setup mode")
 * until an inline cache on a receiver *object* whose chain holds it makes it fast again. String
 * methods are looked up on string primitives, whose caches never do that, so `String.prototype`
 * stayed a dictionary for the process's life, and every `s.charCodeAt` / `s.slice` / `s.length`
 * lookup in optimized code became a call to the generic LoadIC, a large share of the gateway's
 * main thread under insert load (found with bench/perf.ts; bench/LOG.md §2026-11-26 (third
 * session)). Every process loads ioredis (the scale-out backends are imported statically), the
 * embedded mode included.
 *
 * How: a property load through a String wrapper object, repeated until its function has feedback
 * (V8 allocates feedback lazily, after some hundreds of calls), lets the load's cache make the
 * wrapper's prototype chain fast. Cheap (well under a millisecond) and harmless when the
 * prototype is already fast. test/embedded/fast-string-prototype.embedded.test.ts checks, in a child process
 * with V8's natives syntax, that the entry point's process ends up with a fast `String.prototype`.
 */
export function restoreFastStringPrototype(): void {
  const wrapper = Object('') as { charCodeAt: unknown };
  let seen: unknown;
  for (let i = 0; i < LOADS; i++) seen = lookup(wrapper);
  // Keeps the loop from being optimized away.
  if (seen !== String.prototype.charCodeAt) throw new Error('String.prototype.charCodeAt is not what a wrapper inherits');
}

/** Enough calls for V8 to give `lookup` a feedback vector (a few hundred measured). */
const LOADS = 10_000;

/** A named load on an object receiver: the cache that re-fasts its prototype chain. */
function lookup(o: { charCodeAt: unknown }): unknown {
  return o.charCodeAt;
}
