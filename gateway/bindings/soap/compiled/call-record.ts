import type { CallLayout, ItemLayout } from './call-layout.js';

/** A slot's state: the element was not seen, was xsi:nil, or has text (its first occurrence wins). */
export const ABSENT = 0;
export const NIL = 1;
export const TEXT = 2;

/** Past this many slots, an array's storage is given back on reset (one huge batch must not pin it). */
const KEPT_SLOTS = 4096;
const FIRST_ITEMS = 16;

/** The items of one array parameter: `stride` slots per item, states and texts side by side. */
export class ItemSlots {
  count = 0;
  states: Uint8Array;
  /** Always as long as `states`, never holey. */
  texts: string[];

  constructor(readonly layout: ItemLayout) {
    this.states = new Uint8Array(layout.stride * FIRST_ITEMS);
    this.texts = new Array<string>(this.states.length).fill('');
  }

  /** A new item, its slots ABSENT; its index. */
  add(): number {
    const k = this.count++;
    const stride = this.layout.stride;
    const from = k * stride;
    if (from + stride > this.states.length) this.grow();
    this.states.fill(ABSENT, from, from + stride);
    return k;
  }

  reset(): void {
    this.count = 0;
    if (this.states.length > KEPT_SLOTS) {
      this.states = new Uint8Array(this.layout.stride * FIRST_ITEMS);
      this.texts = new Array<string>(this.states.length).fill('');
    }
  }

  private grow(): void {
    const states = new Uint8Array(this.states.length * 2);
    states.set(this.states);
    this.states = states;
    while (this.texts.length < states.length) this.texts.push('');
  }
}

/**
 * The fixed-layout slots of one call to one operation, filled by CallBuilder as the scanner reads
 * the Body element's children and read by SoapArgumentDecoder.decode: per parameter its state and text
 * (the text of each element's own character data, as the reference keeps it), the items of array
 * parameters, and the undeclared elements (extras candidates). One per operation per scanner,
 * reused from request to request.
 */
export class CallRecord<Plan extends CallLayout = CallLayout> {
  readonly states: Uint8Array;
  readonly texts: string[];
  /** Per parameter: its items when it is an array, else null. */
  readonly items: readonly (ItemSlots | null)[];
  extraCount = 0;
  readonly extraNames: string[] = [];
  readonly extraStates: number[] = [];
  readonly extraTexts: string[] = [];
  /** Undeclared names seen in this call (rare: only unknown elements look here). */
  private readonly extraIndex = new Map<string, number>();

  constructor(readonly plan: Plan) {
    this.states = new Uint8Array(plan.layouts.length);
    this.texts = new Array<string>(plan.layouts.length).fill('');
    this.items = plan.layouts.map((layout) => (layout === null ? null : new ItemSlots(layout)));
  }

  reset(): void {
    this.states.fill(ABSENT);
    for (const list of this.items) list?.reset();
    if (this.extraCount > 0) {
      this.extraCount = 0;
      this.extraIndex.clear();
      if (this.extraNames.length > KEPT_SLOTS) {
        this.extraNames.length = 0;
        this.extraStates.length = 0;
        this.extraTexts.length = 0;
      }
    }
  }

  /**
   * An undeclared element at the parameters' level: its index, or -1 when its name was seen
   * before (the first occurrence is the one that counts).
   */
  addExtra(name: string, nil: boolean): number {
    if (this.extraIndex.has(name)) return -1;
    const j = this.extraCount++;
    this.extraIndex.set(name, j);
    this.extraNames[j] = name;
    this.extraStates[j] = nil ? NIL : TEXT;
    this.extraTexts[j] = '';
    return j;
  }

  /** The extra `j` has a child element: not a leaf, so not an extra. */
  notLeaf(j: number): void {
    this.extraStates[j] = ABSENT;
  }
}
