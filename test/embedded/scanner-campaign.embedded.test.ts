/**
 * The envelope scanner against the saxes-based reference on fixed-seed differential campaigns
 * (the long one is `npm run diff:scanner -- --count 1000000`). In-process, but about ten seconds:
 * too long for the unit layer's fast loop, so it runs with the embedded layer (test/README.md).
 */
import { describe, expect, it } from 'vitest';
import { explain, runCampaign } from '../differential/campaign.js';
import { fuzzSoapBodies } from '../differential/fuzz-corpus.js';

/** CPU-bound: about 6 s alone on one core, several times that on a loaded machine. */
const CAMPAIGN_TIMEOUT_MS = 180_000;

describe('scanner vs saxes reference: differential', () => {
  it('agrees on 25,000 generated and mutated envelopes (fixed seed, random chunking)', () => {
    const tally = runCampaign(20261122, 25_000);
    const report = tally.mismatches.slice(0, 3).map((m) => explain(m.case, m.result));
    expect(report).toEqual([]);
    // The campaign exercises both sides of every decision, not just one.
    expect(tally.accepted).toBeGreaterThan(8_000);
    expect(tally.byError['XmlSyntaxError']).toBeGreaterThan(8_000);
    expect(tally.byError['EnvelopeError:VersionMismatch']).toBeGreaterThan(500);
    expect(tally.byError['EnvelopeError:Client']).toBeGreaterThan(50);
    expect(tally.generated + tally.mutated + tally.corpus).toBe(25_000);
  }, CAMPAIGN_TIMEOUT_MS);
});

describe('scanner vs saxes reference: the hardening fuzz corpus', () => {
  it("agrees on 10,000 cases built from the fuzzer's SOAP seeds and mutated bodies", () => {
    const material = fuzzSoapBodies(20261122, 4_000);
    expect(material.length).toBeGreaterThan(1_000);
    const tally = runCampaign(20261123, 10_000, material);
    expect(tally.mismatches.slice(0, 3).map((m) => explain(m.case, m.result))).toEqual([]);
    expect(tally.accepted).toBeGreaterThan(1_000);
    expect(tally.corpus).toBeGreaterThan(200);
  }, CAMPAIGN_TIMEOUT_MS);
});
