/**
 * The hardening fuzzer's SOAP bodies (test/fuzz/) as differential material: every SOAP seed of its
 * corpus (all operations, both versions) and the bodies of its first `mutated` cases (its XML-aware
 * and byte mutations), so the scanner is held to saxes on what the fuzzer throws at the gateway too.
 */
import { corpus, generateCase } from '../fuzz/mutator.js';
import { cloneDraft, renderBody } from '../fuzz/corpus.js';

export function fuzzSoapBodies(seed: number, mutated: number): Uint8Array[] {
  const bodies: Uint8Array[] = [];
  for (const d of corpus()) {
    if (d.binding !== 'soap11' && d.binding !== 'soap12') continue;
    const rendered = cloneDraft(d);
    renderBody(rendered);
    if (rendered.body !== null) bodies.push(rendered.body);
  }
  for (let i = 0; i < mutated; i++) {
    const { draft } = generateCase(seed, i);
    if ((draft.binding === 'soap11' || draft.binding === 'soap12') && draft.body !== null && draft.body.length > 0) bodies.push(draft.body);
  }
  return bodies;
}
