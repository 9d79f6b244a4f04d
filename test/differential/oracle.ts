/**
 * Runs one body through the reference (the saxes-based EnvelopeReader) and through the scanner,
 * and judges whether they agree: the same accept/reject decision, the same error class, the same
 * SoapEnvelope, and the same arguments (or argument fault) from decodeSoapArguments.
 */
import { isUtf8 } from 'node:buffer';
import { isDeepStrictEqual } from 'node:util';
import { findOperation } from '../../shared/catalogue/index.js';
import { todayIn } from '../../gateway/bindings/arguments.js';
import { decodeSoapArguments } from './reference/soap-arguments.js';
import { InvalidEncodingError } from '../../gateway/transport/body-decoder.js';
import { EnvelopeError, XmlSyntaxError, type SoapEnvelope } from '../../gateway/bindings/soap/envelope.js';
import { EnvelopeReader } from './saxes-envelope-reader.js';
import { EnvelopeScanner } from './reference/envelope-builder.js';
import { chunksOf } from './mutator.js';

export type Outcome =
  | { readonly accepted: true; readonly envelope: SoapEnvelope }
  | {
      readonly accepted: false;
      readonly error: string;
      readonly message: string;
      /** Byte offset of the error when known: a scanner syntax error, the reference's first invalid byte. */
      readonly offset: number;
    };

export function errorClass(err: unknown): string {
  if (err instanceof XmlSyntaxError) return 'XmlSyntaxError';
  if (err instanceof EnvelopeError) return `EnvelopeError:${err.kind}`;
  if (err instanceof InvalidEncodingError) return 'InvalidEncodingError';
  return `unexpected ${err instanceof Error ? `${err.constructor.name}: ${err.message}` : String(err)}`;
}

function rejected(err: unknown, offset = err instanceof XmlSyntaxError ? err.offset : -1): Outcome {
  return { accepted: false, error: errorClass(err), message: err instanceof Error ? err.message : String(err), offset };
}

/**
 * Where a fatal UTF-8 decoder stops: the offset of the first byte of the first sequence it
 * refuses (or that the end cuts), or -1 when all of `bytes` is valid UTF-8. Validity is Node's
 * (simdutf), not the scanner's own decoder.
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  if (isUtf8(bytes)) return -1;
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    const length = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (length === 0 || i + length > bytes.length || !isUtf8(bytes.subarray(i, i + length))) return i;
    i += length;
  }
  return -1;
}

/**
 * The reference: EnvelopeReader (saxes) fed the text of the body, decoded chunk by chunk as the
 * body arrives. Invalid UTF-8 is refused (InvalidEncodingError, as the fatal BodyDecoder does)
 * where a fatal decoder stops; the reader first reads the valid text before it, so an earlier
 * error in that text wins (document order). One BOM is an encoding signature: the decoder keeps it
 * and saxes drops it, so a second one is content, as XML says.
 */
export function runReference(bytes: Uint8Array, plan: readonly number[]): Outcome {
  const bad = firstInvalidUtf8(bytes);
  const valid = bad < 0 ? bytes : bytes.subarray(0, bad);
  const reader = new EnvelopeReader();
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  try {
    for (const chunk of chunksOf(valid, plan.filter((p) => p < valid.length))) {
      const text = decoder.decode(chunk, { stream: true });
      if (text !== '') reader.write(text);
    }
    const tail = decoder.decode();
    if (tail !== '') reader.write(tail);
    if (bad >= 0) return rejected(new InvalidEncodingError(`Invalid character in the given encoding (utf-8), byte ${bad + 1} of the body.`), bad);
    return { accepted: true, envelope: reader.end() };
  } catch (err) {
    return rejected(err, -1);
  }
}

const scanner = new EnvelopeScanner();

/** The scanner, given each chunk in memory that is overwritten right after (as uWS reuses it). */
export function runScanner(bytes: Uint8Array, plan: readonly number[]): Outcome {
  scanner.reset({ bom: true, stopOnForeignEncoding: false });
  try {
    for (const chunk of chunksOf(bytes, plan)) {
      const lent = Uint8Array.from(chunk);
      scanner.write(lent);
      lent.fill(0xaa);
    }
    return { accepted: true, envelope: scanner.end() };
  } catch (err) {
    return rejected(err);
  }
}

/** The scanner refuses what saxes accepts, and XML 1.0 says the scanner is right (see docs). */
export const KNOWN_DIFFERENCES = {
  /** `<?target?x` or `<?target??>`: production [16] allows only S or `?>` after a PI target. */
  piTarget: ['a processing instruction target must be followed by white space or "?>".'],
  /**
   * A body with a syntax error and, after it, bytes that are not UTF-8: the scanner reports the
   * first in document order; saxes decides some errors only after looking ahead (to the `;` of a
   * reference, the end of a DOCTYPE or of an XML declaration name, past a CR), so behind a decoder
   * the bad bytes stop it first. Both are 400 Client faults.
   */
  firstErrorFirst: [],
} as const;

export interface Verdict {
  /** null when both agree; else what differs. */
  readonly mismatch: string | null;
  /** A documented deliberate difference that explains a disagreement. */
  readonly known: keyof typeof KNOWN_DIFFERENCES | null;
}

const POSITION = /^\d+:\d+: /;
const ENCODING = /^Invalid character in the given encoding \(utf-8\), line \d+, column \d+ \(byte \d+ of the body\)\.$/;

/**
 * A documented difference explains the outcome when the scanner stopped at it and the reference,
 * having read past that construct, either accepted the body or failed later: on an envelope rule
 * (an EnvelopeError: the root or the Body, checked after the prolog) or on bytes that are not UTF-8.
 */
function knownDifference(reference: Outcome, scanned: Outcome): keyof typeof KNOWN_DIFFERENCES | null {
  if (scanned.accepted || scanned.error !== 'XmlSyntaxError') return null;
  if (!reference.accepted && reference.error === 'InvalidEncodingError' && scanned.offset >= 0 && scanned.offset < reference.offset) return 'firstErrorFirst';
  if (!reference.accepted && !reference.error.startsWith('EnvelopeError')) return null;
  if (KNOWN_DIFFERENCES.piTarget.some((m) => scanned.message.endsWith(m))) return 'piTarget';
  return null;
}

export function judge(reference: Outcome, scanned: Outcome): Verdict {
  const known = knownDifference(reference, scanned);
  if (known !== null) return { mismatch: null, known };
  if (reference.accepted && !scanned.accepted) {
    return { mismatch: `reference accepts, scanner rejects: ${scanned.error}: ${scanned.message}`, known: null };
  }
  if (!reference.accepted && scanned.accepted) return { mismatch: `reference rejects (${reference.error}: ${reference.message}), scanner accepts`, known: null };
  if (!reference.accepted && !scanned.accepted) {
    if (reference.error !== scanned.error) return { mismatch: `error class: reference ${reference.error} (${reference.message}), scanner ${scanned.error} (${scanned.message})`, known: null };
    if (scanned.error === 'XmlSyntaxError' && !POSITION.test(scanned.message)) return { mismatch: `scanner error without line:column: ${scanned.message}`, known: null };
    if (scanned.error === 'InvalidEncodingError' && !ENCODING.test(scanned.message)) return { mismatch: `encoding error without its place: ${scanned.message}`, known: null };
    if (scanned.error.startsWith('EnvelopeError') && scanned.message !== reference.message) return { mismatch: `fault text: ${reference.message} / ${scanned.message}`, known: null };
    return { mismatch: null, known: null };
  }
  if (reference.accepted && scanned.accepted) {
    if (!isDeepStrictEqual(reference.envelope, scanned.envelope)) return { mismatch: 'different envelopes', known: null };
    const args = compareArguments(reference.envelope, scanned.envelope);
    return { mismatch: args, known: null };
  }
  return { mismatch: null, known: null };
}

/** A fixed "today" (dates without one take it, as XmlConvert does), so both sides decode alike. */
const TODAY = todayIn('America/Argentina/Buenos_Aires', () => Date.UTC(2026, 10, 22, 12, 0, 0));

/** decodeSoapArguments on both envelopes: the same arguments and extras, or the same fault. */
function compareArguments(a: SoapEnvelope, b: SoapEnvelope): string | null {
  const op = a.operation === null ? undefined : findOperation(a.operation.name);
  if (op === undefined) return null;
  const decode = (env: SoapEnvelope) => {
    try {
      return { ok: decodeSoapArguments(op, env.operation?.children ?? [], TODAY) };
    } catch (err) {
      return { fault: errorClass(err), message: err instanceof Error ? err.message : String(err) };
    }
  };
  return isDeepStrictEqual(decode(a), decode(b)) ? null : 'different decoded arguments';
}

export function describe(outcome: Outcome): string {
  return outcome.accepted ? `accepted ${JSON.stringify(outcome.envelope)}` : `rejected ${outcome.error}: ${outcome.message}`;
}
