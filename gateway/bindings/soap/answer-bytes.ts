import type { OperationDef } from '../../../shared/catalogue/index.js';
import type { SoapResultWriter } from '../result-xml.js';
import type { SoapVersion } from './envelope.js';
import { envelope } from './envelope-writer.js';
import { ScratchBytes } from '../../../shared/util/scratch-bytes.js';

/**
 * The answer of an operation whose result is an int or a boolean, as bytes: the envelope around
 * the one value is encoded once per operation and version, and each answer copies it and the
 * value's digits into one reused buffer. The string form cost a concatenation and, when uWS read
 * it, a flat copy of the whole envelope per request (bench/allocations.ts); and a string uWS
 * must convert, bytes it need not. Only these two types: their text never needs escaping.
 *
 * The buffer is reused by the next answer: the view returned must be written out (uWS copies
 * what it cannot send at once) before anything else is rendered.
 */
export class ScalarAnswerBytes {
  private readonly before: Record<SoapVersion, Buffer>;
  private readonly after: Record<SoapVersion, Buffer>;

  private constructor(
    private readonly type: 'int' | 'boolean',
    open: string,
    close: string,
  ) {
    // The envelope splits around a marker no XML text contains.
    const [head11, tail11] = envelope('1.1', `${open}\u0000${close}`).split('\u0000') as [string, string];
    const [head12, tail12] = envelope('1.2', `${open}\u0000${close}`).split('\u0000') as [string, string];
    this.before = { '1.1': Buffer.from(head11, 'utf8'), '1.2': Buffer.from(head12, 'utf8') };
    this.after = { '1.1': Buffer.from(tail11, 'utf8'), '1.2': Buffer.from(tail12, 'utf8') };
  }

  /** The template of `op`'s answers, or null when its result is not an int or a boolean. */
  static of(op: OperationDef, writer: SoapResultWriter): ScalarAnswerBytes | null {
    const result = op.result;
    // The catalogue's scalar results are ints and booleans (the type says so): no text to escape.
    if (result.kind !== 'scalar') return null;
    const parts = writer.scalarParts();
    return new ScalarAnswerBytes(result.type, parts.open, parts.close);
  }

  /** The answer for `value`, or null when the value is not of the result's type (the string path answers it). */
  render(version: SoapVersion, value: unknown): Uint8Array | null {
    let text: string;
    if (this.type === 'boolean') {
      if (typeof value !== 'boolean') return null;
      text = value ? 'true' : 'false';
    } else {
      if (typeof value !== 'number' || !Number.isInteger(value)) return null;
      text = String(value);
    }
    const before = this.before[version];
    const after = this.after[version];
    const size = before.length + text.length + after.length;
    const buf = scratch.reserve(size);
    before.copy(buf, 0);
    // Digits, '-', 'true', 'false': one byte per character.
    buf.write(text, before.length, 'latin1');
    after.copy(buf, before.length + text.length);
    // Answers come in few lengths: a template per operation and version, up to 11 characters of value.
    return scratch.view(size);
  }
}

const scratch = new ScratchBytes();
