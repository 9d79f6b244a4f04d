import type { Cursor } from '../scanner/cursor.js';
import { EnvelopeLevels, isNil } from '../scanner/envelope-levels.js';
import { XmlEnvelopeScanner } from '../scanner/scanner.js';
import type { StartTag } from '../scanner/tags.js';
import { MAX_KEPT_DEPTH, type SoapVersion } from '../envelope.js';
import { ABSENT, CallRecord, NIL, TEXT, type ItemSlots } from './call-record.js';
import type { DecoderRecord, SoapArgumentDecoders } from './argument-decoder.js';

/** What the compiled path reads of a SOAP request: the version, the operation, its slots. */
export interface ScannedCall {
  readonly version: SoapVersion;
  /** The first Body element's local name, or null for an empty Body. */
  readonly operation: string | null;
  /** Its arguments' slots when it names an operation of the catalogue, else null. */
  readonly record: DecoderRecord | null;
}

// What the open element at a depth (4..6) is; module-local for the same reason as scanner.ts's bytes.
const IGNORED = 0;
/** A scalar parameter (slot: the parameter). */
const PARAM = 1;
/** An array parameter that is not nil: its children are items. */
const ARRAY = 2;
/** An undeclared element at the parameters' level (slot: its extras index). */
const EXTRA = 3;
/** A scalar array item (slot: in the open array's texts). */
const ITEM = 4;
/** A complex array item (slot: the item's index): its children are fields. */
const COMPLEX_ITEM = 5;
/** A field of a complex item (slot: in the open array's texts). */
const FIELD = 6;

/**
 * The compiled path's sink: the envelope rules of EnvelopeLevels, then the operation element's
 * children go straight into the operation's CallRecord. An element's local name is matched
 * against the plan's byte tables where it lies in the buffer, the element's role and slot are
 * kept per depth in typed arrays, and only the text of a slot becomes a string: no node, no
 * array of children, no Map per level. What it keeps is exactly what decodeSoapArguments reads of
 * the reference's node tree (the first occurrence of a name wins, xsi:nil, items by name, text of
 * leaf undeclared elements), which the differential test (test/unit/gateway/bindings/soap/compiled/decoder.unit.test.ts) holds it to.
 */
class CallBuilder extends EnvelopeLevels<ScannedCall> {
  private operation: string | null = null;
  private record: DecoderRecord | null = null;
  /** The items of the array parameter open at depth 4. */
  private list: ItemSlots | null = null;
  private readonly roles = new Uint8Array(MAX_KEPT_DEPTH + 1);
  private readonly slots = new Int32Array(MAX_KEPT_DEPTH + 1);
  private readonly keeps = new Uint8Array(MAX_KEPT_DEPTH + 1);
  /** This builder's record of each operation, by plan index (made on first use, then reused). */
  private readonly records: (DecoderRecord | undefined)[];

  constructor(private readonly plans: SoapArgumentDecoders) {
    super();
    this.records = new Array<DecoderRecord | undefined>(plans.size).fill(undefined);
  }

  text(text: string): void {
    const depth = this.depth;
    const slot = this.slots[depth]!;
    switch (this.roles[depth]) {
      case PARAM: {
        const texts = this.record!.texts;
        texts[slot] = texts[slot]! + text;
        break;
      }
      case EXTRA: {
        const texts = this.record!.extraTexts;
        texts[slot] = texts[slot]! + text;
        break;
      }
      default: {
        const texts = this.list!.texts;
        texts[slot] = texts[slot]! + text;
      }
    }
  }

  protected clear(): void {
    this.operation = null;
    this.record = null;
    this.list = null;
  }

  protected openEnvelope(): void {
    // The operation's namespace is not read on this path: no declaration is kept.
  }

  protected openOperation(tag: StartTag): void {
    const name = tag.localName();
    this.operation = name;
    const plan = this.plans.find(name);
    if (plan === undefined) {
      this.record = null;
      return;
    }
    const record = (this.records[plan.index] ??= new CallRecord(plan));
    record.reset();
    this.record = record;
  }

  protected openKept(tag: StartTag, c: Cursor, depth: number): void {
    this.roles[depth] = IGNORED;
    this.keeps[depth] = 0;
    const record = this.record;
    if (record === null) return;
    const start = tag.localStart();
    if (depth === 4) this.openParam(record, tag, c.buf, start);
    else if (depth === 5) this.openItem(record, tag, c.buf, start);
    else this.openField(tag, c.buf, start);
    if (this.keeps[depth] === 1) this.keepsText = true;
  }

  protected closeKept(): void {
    // Nothing to undo: every open overwrites its depth's role.
  }

  protected keepsTextAt(depth: number): boolean {
    return this.keeps[depth] === 1;
  }

  protected result(version: SoapVersion): ScannedCall {
    return { version, operation: this.operation, record: this.record };
  }

  private openParam(record: CallRecord, tag: StartTag, buf: Uint8Array, start: number): void {
    const plan = record.plan;
    const p = plan.params.find(buf, start, tag.nameEnd);
    if (p < 0) {
      const j = record.addExtra(tag.localName(), isNil(tag));
      if (j >= 0) this.set(4, EXTRA, j, record.extraStates[j] === TEXT);
      return;
    }
    if (record.states[p] !== ABSENT) return;
    const nil = isNil(tag);
    record.states[p] = nil ? NIL : TEXT;
    if (nil) return;
    if (plan.layouts[p] !== null) {
      this.list = record.items[p]!;
      this.set(4, ARRAY, p, false);
    } else {
      record.texts[p] = '';
      this.set(4, PARAM, p, true);
    }
  }

  private openItem(record: CallRecord, tag: StartTag, buf: Uint8Array, start: number): void {
    const parent = this.roles[4];
    if (parent === EXTRA) {
      record.notLeaf(this.slots[4]!);
      return;
    }
    if (parent !== ARRAY) return;
    const list = this.list!;
    const itemName = list.layout.itemName;
    if (itemName === null) {
      const k = list.add();
      const nil = isNil(tag);
      list.states[k] = nil ? NIL : TEXT;
      if (nil) return;
      list.texts[k] = '';
      this.set(5, ITEM, k, true);
    } else if (itemName.find(buf, start, tag.nameEnd) === 0) {
      // A nil item still has its fields read, as XmlSerializer (and the reference) reads them.
      this.set(5, COMPLEX_ITEM, list.add(), false);
    }
  }

  private openField(tag: StartTag, buf: Uint8Array, start: number): void {
    if (this.roles[5] !== COMPLEX_ITEM) return;
    const list = this.list!;
    const f = list.layout.fields!.find(buf, start, tag.nameEnd);
    if (f < 0) return;
    const slot = this.slots[5]! * list.layout.stride + f;
    if (list.states[slot] !== ABSENT) return;
    const nil = isNil(tag);
    list.states[slot] = nil ? NIL : TEXT;
    if (nil) return;
    list.texts[slot] = '';
    this.set(6, FIELD, slot, true);
  }

  private set(depth: number, role: number, slot: number, keeps: boolean): void {
    this.roles[depth] = role;
    this.slots[depth] = slot;
    this.keeps[depth] = keeps ? 1 : 0;
  }
}

/** The scanner with the compiled sink: what the SOAP binding runs. */
export class CallScanner extends XmlEnvelopeScanner<ScannedCall> {
  constructor(plans: SoapArgumentDecoders) {
    super(new CallBuilder(plans));
  }
}
