import {
  isArrayParam,
  type ArgumentBag,
  type ArrayParam,
  type OperationDef,
  type ScalarField,
} from '../../shared/catalogue/index.js';

/**
 * The declared limits of one operation (maxLength of every string, maxItems of arrays), worked
 * out once from the catalogue and checked on every call before the handler runs.
 */
interface LimitedArray {
  readonly name: string;
  readonly maxItems: number;
  readonly perItem: boolean;
  /** String fields of each item with a maxLength (complex items only). */
  readonly fields: readonly Required<Pick<ScalarField, 'name' | 'maxLength'>>[];
}

interface LimitCheck {
  /** True when a value outside any per-item array breaks its limit: the whole call is invalid. */
  readonly callInvalid: boolean;
  /** Positions of the per-item array's items that break a limit (each answered on its own). */
  readonly invalidItems: ReadonlySet<number>;
}

const NO_ITEMS: ReadonlySet<number> = new Set();
const VALID: LimitCheck = { callInvalid: false, invalidItems: NO_ITEMS };

function tooLong(value: unknown, max: number): boolean {
  return typeof value === 'string' && value.length > max;
}

function overLength(name: string, value: string, max: number): string {
  return `${name} is ${value.length} characters; the limit is ${max}`;
}

function limitedFields(fields: readonly ScalarField[]): Required<Pick<ScalarField, 'name' | 'maxLength'>>[] {
  return fields.flatMap((f) => (f.type === 'string' && f.maxLength !== undefined ? [{ name: f.name, maxLength: f.maxLength }] : []));
}

export class OperationLimits {
  /** Top-level strings with a limit; credentials excluded (authentication checks those). */
  private readonly strings: readonly Required<Pick<ScalarField, 'name' | 'maxLength'>>[];
  private readonly arrays: readonly LimitedArray[];
  /** The per-item array, whose items are answered one by one (at most one per operation). */
  readonly perItemParam: string | null;

  constructor(op: OperationDef, credentialParams: ReadonlySet<string>) {
    const scalars = op.params.filter((p) => !isArrayParam(p)) as ScalarField[];
    this.strings = limitedFields(scalars.filter((p) => !credentialParams.has(p.name)));
    this.arrays = op.params.filter(isArrayParam).map((p: ArrayParam) => ({
      name: p.name,
      maxItems: p.maxItems ?? Infinity,
      perItem: p.perItem === true,
      fields: typeof p.type.item === 'string' ? [] : limitedFields(p.type.item.fields),
    }));
    const perItem = this.arrays.filter((a) => a.perItem);
    if (perItem.length > 1) throw new Error(`${op.name}: at most one array parameter can be answered per item.`);
    this.perItemParam = perItem[0]?.name ?? null;
  }

  check(args: ArgumentBag): LimitCheck {
    let callInvalid = this.strings.some((s) => tooLong(args[s.name], s.maxLength));
    let invalidItems: Set<number> | null = null;
    for (const array of this.arrays) {
      const items = args[array.name];
      if (!Array.isArray(items)) continue;
      if (!array.perItem) {
        if (items.length > array.maxItems || items.some((item) => this.itemTooLong(array, item))) callInvalid = true;
        continue;
      }
      for (let i = 0; i < items.length; i++) {
        if (i >= array.maxItems || this.itemTooLong(array, items[i])) (invalidItems ??= new Set()).add(i);
      }
    }
    if (!callInvalid && invalidItems === null) return VALID;
    return { callInvalid, invalidItems: invalidItems ?? NO_ITEMS };
  }

  /** Why the call is over a limit, in words (only asked once `check` found it is): the first value over one. */
  problem(args: ArgumentBag): string {
    const long = this.strings.find((s) => tooLong(args[s.name], s.maxLength));
    if (long !== undefined) return overLength(long.name, args[long.name] as string, long.maxLength);
    for (const array of this.arrays) {
      const items = args[array.name];
      if (!Array.isArray(items) || array.perItem) continue;
      if (items.length > array.maxItems) return `${array.name} holds ${items.length} items; at most ${array.maxItems}`;
      for (let i = 0; i < items.length; i++) {
        const problem = this.itemProblem(array, items[i]);
        if (problem !== null) return `${array.name} item ${i + 1}: ${problem}`;
      }
    }
    return 'a value is over its limit';
  }

  /** Why item `index` of the per-item array is refused. */
  perItemProblem(args: ArgumentBag, index: number): string {
    const array = this.arrays.find((a) => a.perItem);
    if (array === undefined) return 'a value is over its limit';
    if (index >= array.maxItems) return `${array.name} holds more than ${array.maxItems} items; this one is past them`;
    const items = args[array.name];
    return (Array.isArray(items) ? this.itemProblem(array, items[index]) : null) ?? 'a value is over its limit';
  }

  private itemProblem(array: LimitedArray, item: unknown): string | null {
    if (item === null || typeof item !== 'object') return null;
    const fields = item as Record<string, unknown>;
    const long = array.fields.find((f) => tooLong(fields[f.name], f.maxLength));
    return long === undefined ? null : overLength(long.name, fields[long.name] as string, long.maxLength);
  }

  private itemTooLong(array: LimitedArray, item: unknown): boolean {
    if (item === null || typeof item !== 'object') return false;
    const fields = item as Record<string, unknown>;
    return array.fields.some((f) => tooLong(fields[f.name], f.maxLength));
  }
}
