/**
 * The compiled SOAP decoder (gateway/bindings/soap/compiled/) against the interpreted path it
 * replaced, kept as its reference: the same scanner with the node-tree sink (EnvelopeScanner)
 * plus decodeSoapArguments. On one body (in the same chunks) both must accept or refuse alike,
 * with the same error and text, the same version and operation, and for the operation the Body
 * names (every operation when the Body is empty) the same DecodedCall, deep-equal with NaN and
 * -0 told apart and the extras in the same order, or the same argument fault.
 */
import { isDeepStrictEqual } from 'node:util';
import { findOperation, operationList, type OperationDef } from '../../shared/catalogue/index.js';
import { todayIn, type DecodedCall } from '../../gateway/bindings/arguments.js';
import { decodeSoapArguments } from './reference/soap-arguments.js';
import { type XmlEnvelopeScanner } from '../../gateway/bindings/soap/scanner/scanner.js';
import { EnvelopeScanner } from './reference/envelope-builder.js';
import { CallScanner } from '../../gateway/bindings/soap/compiled/call-builder.js';
import type { DecoderRecord } from '../../gateway/bindings/soap/compiled/argument-decoder.js';
import { catalogPlans } from '../../gateway/bindings/soap/compiled/argument-decoder.js';
import { chunkPlan, chunksOf } from './mutator.js';
import { errorClass } from './oracle.js';
import { Rng } from './rng.js';
import { structuredEnvelope } from './structure.js';

/** A fixed "today" (dates without one take it), as oracle.ts. */
const TODAY = todayIn('America/Argentina/Buenos_Aires', () => Date.UTC(2026, 10, 22, 12, 0, 0));

/** What one path made of a body, in comparable form (decoded at once: the slots are reused). */
export type PathOutcome =
  | { readonly accepted: false; readonly error: string; readonly message: string }
  | {
      readonly accepted: true;
      readonly version: string;
      readonly operation: string | null;
      /** Per operation decoded (see `operationsOf`): its arguments and extras, or its fault. */
      readonly calls: readonly { readonly op: string; readonly decoded: unknown }[];
    };

/** The operations a body's arguments are decoded for: the one it names, or all for an empty Body. */
function operationsOf(name: string | null): readonly OperationDef[] {
  if (name === null) return operationList;
  const op = findOperation(name);
  return op === undefined ? [] : [op];
}

/** A DecodedCall (or its fault) with the extras as an ordered list, so that order counts too. */
function comparable(decode: () => DecodedCall): unknown {
  try {
    const { args, extras } = decode();
    return { args, extras: [...extras] };
  } catch (err) {
    return { fault: errorClass(err), message: err instanceof Error ? err.message : String(err), param: (err as { param?: unknown }).param };
  }
}

function scanInto<E>(scanner: XmlEnvelopeScanner<E>, bytes: Uint8Array, plan: readonly number[]): E {
  scanner.reset({ bom: true, stopOnForeignEncoding: false });
  for (const chunk of chunksOf(bytes, plan)) {
    const lent = Uint8Array.from(chunk);
    scanner.write(lent);
    lent.fill(0xaa);
  }
  return scanner.end();
}

function refused(err: unknown): PathOutcome {
  return { accepted: false, error: errorClass(err), message: err instanceof Error ? err.message : String(err) };
}

const interpretedScanner = new EnvelopeScanner();

export function runInterpreted(bytes: Uint8Array, plan: readonly number[]): PathOutcome {
  try {
    const env = scanInto(interpretedScanner, bytes, plan);
    const name = env.operation?.name ?? null;
    const children = env.operation?.children ?? [];
    const calls = operationsOf(name).map((op) => ({ op: op.name, decoded: comparable(() => decodeSoapArguments(op, children, TODAY)) }));
    return { accepted: true, version: env.version, operation: name, calls };
  } catch (err) {
    return refused(err);
  }
}

const compiledScanner = new CallScanner(catalogPlans);

export function runCompiled(bytes: Uint8Array, plan: readonly number[]): PathOutcome {
  try {
    const call = scanInto(compiledScanner, bytes, plan);
    const record: DecoderRecord | null = call.record;
    const calls = operationsOf(call.operation).map((op) => ({ op: op.name, decoded: comparable(() => catalogPlans.decode(op, record, TODAY)) }));
    return { accepted: true, version: call.version, operation: call.operation, calls };
  } catch (err) {
    return refused(err);
  }
}

/** null when both paths agree on the body, else what differs. */
export function compareCompiled(bytes: Uint8Array, plan: readonly number[]): string | null {
  const interpreted = runInterpreted(bytes, plan);
  const compiled = runCompiled(bytes, plan);
  if (isDeepStrictEqual(interpreted, compiled)) return null;
  return `compiled path differs from the interpreted one:\n  interpreted: ${show(interpreted)}\n  compiled:    ${show(compiled)}`;
}

function show(outcome: PathOutcome): string {
  return JSON.stringify(outcome, (_k, v: unknown) => (typeof v === 'number' && (Number.isNaN(v) || Object.is(v, -0)) ? String(v === 0 ? '-0' : v) : v));
}

export interface StructureTally {
  cases: number;
  /** Cases whose Body named an operation and decoded without a fault. */
  decoded: number;
  faults: number;
  withExtras: number;
  withItems: number;
  mismatches: string[];
}

/**
 * `count` bodies from structure.ts (each reproducible from the seed and its index), in random
 * chunks, through both paths; the tally says what they exercised.
 */
export function runStructureCampaign(seed: number, count: number): StructureTally {
  const tally: StructureTally = { cases: 0, decoded: 0, faults: 0, withExtras: 0, withItems: 0, mismatches: [] };
  for (let i = 0; i < count; i++) {
    const rng = new Rng((seed ^ Math.imul(i + 1, 0x9e3779b1)) >>> 0);
    const bytes = structuredEnvelope(rng);
    const plan = chunkPlan(rng, bytes.length);
    tally.cases++;
    const mismatch = compareCompiled(bytes, plan);
    if (mismatch !== null) {
      tally.mismatches.push(`case ${i}, chunks at [${plan.join(', ')}]: ${Buffer.from(bytes).toString('utf8')}\n${mismatch}`);
      continue;
    }
    const outcome = runInterpreted(bytes, plan);
    if (!outcome.accepted || outcome.operation === null) continue;
    for (const { decoded } of outcome.calls) {
      const call = decoded as { fault?: string; args?: Record<string, unknown>; extras?: unknown[] };
      if (call.fault !== undefined) tally.faults++;
      else {
        tally.decoded++;
        if (call.extras!.length > 0) tally.withExtras++;
        if (Object.values(call.args!).some((v) => Array.isArray(v) && v.length > 0)) tally.withItems++;
      }
    }
  }
  return tally;
}
