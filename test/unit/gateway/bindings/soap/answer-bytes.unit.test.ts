/**
 * The byte template of int and boolean SOAP answers (gateway/bindings/soap/answer-bytes.ts)
 * against the text path it stands in for (SoapResultWriter + envelope, itself held byte-exact to
 * ASMX by the wire fixtures): the same bytes for every such operation, both versions, values at
 * the edges, and a namespace long enough to outgrow the reused buffer.
 */
import { describe, expect, it } from 'vitest';
import { operationsByName } from '../../../../../shared/catalogue/index.js';
import { SoapResultWriter } from '../../../../../gateway/bindings/result-xml.js';
import { ScalarAnswerBytes } from '../../../../../gateway/bindings/soap/answer-bytes.js';
import { envelope } from '../../../../../gateway/bindings/soap/envelope-writer.js';
import type { SoapVersion } from '../../../../../gateway/bindings/soap/envelope.js';

const VERSIONS: SoapVersion[] = ['1.1', '1.2'];
const INTS = [0, 1, -1, -5, 42, 2147483647, -2147483648, 1001];

function check(namespace: string): number {
  let compared = 0;
  for (const op of operationsByName) {
    const text = new SoapResultWriter(op, namespace);
    const bytes = ScalarAnswerBytes.of(op, text);
    const result = op.result;
    const scalar = result.kind === 'scalar';
    expect(bytes !== null, op.name).toBe(scalar);
    if (bytes === null || result.kind !== 'scalar') continue;
    const values: unknown[] = result.type === 'int' ? INTS : [true, false];
    for (const version of VERSIONS) {
      for (const value of values) {
        const rendered = bytes.render(version, value);
        expect(rendered, `${op.name} ${version} ${String(value)}`).not.toBeNull();
        // Copied at once: the next render reuses the buffer.
        const got = Buffer.from(rendered!).toString('utf8');
        expect(got, `${op.name} ${version} ${String(value)}`).toBe(envelope(version, text.body(value)));
        compared++;
      }
    }
  }
  return compared;
}

describe('ScalarAnswerBytes', () => {
  it('renders what the text path renders, for every int and boolean operation', () => {
    // The insert family (int), Login and the other booleans: the catalogue has both kinds.
    expect(check('http://tempuri.org/')).toBeGreaterThan(40);
  });

  it('grows its buffer for a long configured namespace', () => {
    expect(check(`http://example.com/${'ñ'.repeat(1500)}/`)).toBeGreaterThan(40);
  });

  it('leaves a value of another type to the text path', () => {
    const op = operationsByName.find((o) => o.result.kind === 'scalar' && o.result.type === 'int')!;
    const bytes = ScalarAnswerBytes.of(op, new SoapResultWriter(op, 'http://tempuri.org/'))!;
    expect(bytes.render('1.1', 1.5)).toBeNull();
    expect(bytes.render('1.1', '7')).toBeNull();
    expect(bytes.render('1.1', null)).toBeNull();
    const bool = operationsByName.find((o) => o.result.kind === 'scalar' && o.result.type === 'boolean')!;
    expect(ScalarAnswerBytes.of(bool, new SoapResultWriter(bool, 'http://tempuri.org/'))!.render('1.2', 1)).toBeNull();
  });
});
