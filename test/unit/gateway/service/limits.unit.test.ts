/**
 * The declared limits of an operation (gateway/service/limits.ts), worked out from catalogue
 * entries: strings over maxLength, arrays over maxItems, and per-item arrays answered item by item.
 */
import { describe, expect, it } from 'vitest';
import { OperationLimits } from '../../../../gateway/service/limits.js';
import { defineOperation, findOperation, type OperationDef } from '../../../../shared/catalogue/index.js';

const item = { name: 'Item', fields: [{ name: 'Code', type: 'string', maxLength: 3 }, { name: 'N', type: 'int' }] } as const;

const op = defineOperation({
  name: 'LimitsProbe',
  description: 'test only',
  authentication: 'none',
  params: [
    { name: 'User', type: 'string', maxLength: 5, credential: 'systemUser' },
    { name: 'Note', type: 'string', maxLength: 4 },
    { name: 'Free', type: 'string' },
    { name: 'Tags', type: { array: true, item: 'string' }, maxItems: 2 },
    { name: 'Items', type: { array: true, item }, maxItems: 3, perItem: true },
  ],
  result: { type: 'int' },
} as unknown as OperationDef);

const limits = new OperationLimits(op, new Set(['User']));

describe('OperationLimits', () => {
  it('passes a call within every limit, and values of other types', () => {
    const check = limits.check({ User: 'abcde', Note: 'abcd', Free: 'x'.repeat(10_000), Tags: ['a', 'b'], Items: [{ Code: 'abc', N: 1 }] });
    expect(check).toEqual({ callInvalid: false, invalidItems: new Set() });
    expect(limits.check({ Note: null, Tags: null, Items: null }).callInvalid).toBe(false);
  });

  it('leaves credentials to authentication, whatever their length', () => {
    expect(limits.check({ User: 'x'.repeat(100) }).callInvalid).toBe(false);
  });

  it('makes the whole call invalid for a string or a whole-call array over its limit', () => {
    expect(limits.check({ Note: 'abcde' }).callInvalid).toBe(true);
    expect(limits.check({ Tags: ['a', 'b', 'c'] }).callInvalid).toBe(true);
  });

  it('answers a per-item array item by item: the items over a field limit, and those past maxItems', () => {
    const check = limits.check({ Items: [{ Code: 'ok' }, { Code: 'toolong' }, { Code: 'ok' }, { Code: 'ok' }, { Code: 'ok' }] });
    expect(check.callInvalid).toBe(false);
    expect([...check.invalidItems].sort()).toEqual([1, 3, 4]);
  });

  it('counts characters as .NET does (UTF-16 code units)', () => {
    expect(limits.check({ Note: '🚗🚗' }).callInvalid).toBe(false); // 4 code units
    expect(limits.check({ Note: '🚗🚗a' }).callInvalid).toBe(true);
  });

  it('refuses an operation declaring two per-item arrays', () => {
    const two = { ...op, params: [...op.params, { name: 'More', type: { array: true, item }, perItem: true }] } as unknown as OperationDef;
    expect(() => new OperationLimits(two, new Set())).toThrow(/at most one array parameter can be answered per item/);
  });

  it('holds for the real insert batch: LoginYInsertarEventos answers its events one by one', () => {
    const batch = findOperation('LoginYInsertarEventos');
    expect(batch).toBeDefined();
    expect(new OperationLimits(batch!, new Set(['SystemUser', 'Password'])).perItemParam).not.toBeNull();
  });
});
