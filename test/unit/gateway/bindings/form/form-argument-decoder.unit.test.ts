/**
 * The compiled HTTP GET/POST decoder (gateway/bindings/form/form-argument-decoder.ts) against the
 * interpreted decodeFormArguments it replaced, kept as the reference: random form bodies for every
 * HTTP-bindable operation (names in any case, repeated names joined by commas, undeclared names
 * including Object.prototype's, values valid and not for their type, escapes), read by the
 * FormDecoder in random chunks, must give a deep-equal DecodedCall (extras in order) or the same
 * error with the same text. Plus the rules one by one with their values.
 */
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { findOperation, httpBindable, isArrayParam, operationList, type OperationDef } from '../../../../../shared/catalogue/index.js';
import { MissingParameterError, NO_EXTRAS, todayIn, type DecodedCall } from '../../../../../gateway/bindings/arguments.js';
import { decodeFormArguments } from '../../../../differential/reference/form-arguments.js';
import { FormDecoder, type FormFields } from '../../../../../gateway/bindings/form/form-decoder.js';
import { catalogFormPlans } from '../../../../../gateway/bindings/form/form-argument-decoder.js';
import { Rng } from '../../../../differential/rng.js';

const TODAY = todayIn('UTC', () => Date.UTC(2026, 10, 22, 12, 0, 0));
const FORM_OPS = operationList.filter(httpBindable);
const UNDECLARED = ['Rumbo', 'rumbo', 'Crudo', 'constructor', '__proto__', 'toString', 'a%20b', 'x', ''];
const VALUES = ['', 'acme', '42', '-7', '2147483648', ' 12 ', '1.5', '1,234.5', 'abc', 'NaN', 'true', 'False', '1', '0', 'yes',
  '11/21/2026 10:00:08', '2026-11-22T12:00:00Z', 'Nov 21', 'not a date', '%C3%B1and%C3%BA', 'a+b', '%zz', '%E2%82%AC', 'caf\u00e9'];

function randomCase(rng: Rng, name: string): string {
  switch (rng.int(4)) {
    case 0:
      return name.toLowerCase();
    case 1:
      return name.toUpperCase();
    case 2:
      return Array.from(name, (c) => (rng.chance(0.5) ? c.toUpperCase() : c.toLowerCase())).join('');
    default:
      return name;
  }
}

/** A form body for `op`: its parameters mostly present, in any order and case, with noise. */
function formBody(rng: Rng, op: OperationDef): string {
  const pairs: string[] = [];
  for (const p of op.params) {
    if (isArrayParam(p) || rng.chance(0.1)) continue;
    const times = rng.chance(0.05) ? 2 : 1;
    for (let k = 0; k < times; k++) pairs.push(`${randomCase(rng, p.name)}=${rng.pick(VALUES)}`);
  }
  while (rng.chance(0.3)) pairs.push(rng.chance(0.9) ? `${rng.pick(UNDECLARED)}=${rng.pick(VALUES)}` : rng.pick(UNDECLARED));
  for (let i = pairs.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [pairs[i], pairs[j]] = [pairs[j]!, pairs[i]!];
  }
  return pairs.join(rng.chance(0.1) ? '&&' : '&');
}

function read(body: string, rng: Rng): FormFields {
  const bytes = Buffer.from(body, 'latin1');
  const decoder = new FormDecoder();
  let from = 0;
  while (from < bytes.length) {
    const to = Math.min(bytes.length, from + rng.range(1, 40));
    decoder.push(bytes.subarray(from, to));
    from = to;
  }
  return decoder.end();
}

function comparable(decode: () => DecodedCall): unknown {
  try {
    const { args, extras } = decode();
    return { args, extras: [...extras] };
  } catch (err) {
    const e = err as Error & { param?: string; failure?: unknown };
    return { error: e.constructor.name, message: e.message, param: e.param, failure: e.failure };
  }
}

describe('compiled form decoder against the interpreted one: differential', () => {
  it('agrees on 5,000 random form bodies for every HTTP-bindable operation (fixed seed, random chunks)', () => {
    const mismatches: string[] = [];
    let decoded = 0;
    let refused = 0;
    let withExtras = 0;
    for (let i = 0; i < 5_000; i++) {
      const rng = new Rng((20261125 ^ Math.imul(i + 1, 0x9e3779b1)) >>> 0);
      const op = rng.pick(FORM_OPS);
      const body = formBody(rng, op);
      const fields = read(body, rng);
      const reference = comparable(() => decodeFormArguments(op, fields, TODAY));
      const compiled = comparable(() => catalogFormPlans.decode(op, fields, TODAY));
      if (!isDeepStrictEqual(reference, compiled)) mismatches.push(`${op.name} ${body}: ${JSON.stringify(reference)} / ${JSON.stringify(compiled)}`);
      else if ((reference as { error?: string }).error !== undefined) refused++;
      else {
        decoded++;
        if ((reference as { extras: unknown[] }).extras.length > 0) withExtras++;
      }
    }
    expect(mismatches.slice(0, 3)).toEqual([]);
    expect(decoded).toBeGreaterThan(1_000);
    expect(refused).toBeGreaterThan(500);
    expect(withExtras).toBeGreaterThan(300);
  });
});

describe('compiled form decoder: the rules, with their values', () => {
  const decode = (opName: string, body: string): DecodedCall => {
    const op = findOperation(opName)!;
    const fields = FormDecoder.decodeQuery(body);
    const compiled = catalogFormPlans.decode(op, fields, TODAY);
    expect(comparable(() => compiled)).toStrictEqual(comparable(() => decodeFormArguments(op, fields, TODAY)));
    return compiled;
  };

  it('names in any case, repeated names joined with commas, a missing string is empty', () => {
    const { args, extras } = decode('Login', 'systemuser=a&SYSTEMUSER=b');
    expect(args).toEqual({ SystemUser: 'a,b', Password: '' });
    expect(extras).toBe(NO_EXTRAS);
  });

  it('undeclared fields are extras by their first spelling, in order', () => {
    const { extras } = decode('Login', 'SystemUser=a&rumbo=90&Password=p&Rumbo=1&constructor=c');
    expect([...extras]).toEqual([
      ['rumbo', '90,1'],
      ['constructor', 'c'],
    ]);
  });

  it('a missing int is MissingParameterError; an unreadable one the conversion text', () => {
    const op = findOperation('ComandoProcesado')!;
    expect(() => catalogFormPlans.decode(op, FormDecoder.decodeQuery('correcto=true'), TODAY)).toThrow(MissingParameterError);
    expect(() => catalogFormPlans.decode(op, FormDecoder.decodeQuery('NUMERO=x&correcto=true'), TODAY)).toThrow(/x/);
    expect(decode('ComandoProcesado', 'NUMERO=+7&correcto=1').args).toEqual({ NUMERO: 7, correcto: true });
  });
});
