/**
 * The compiled SOAP decoder against the interpreted path (node tree + decodeSoapArguments) on a
 * long fixed-seed run of structure-stressing bodies (test/differential/structure.ts). In-process
 * but several seconds, so it runs with the embedded layer, as scanner-campaign.embedded.test.ts
 * (whose generated and mutated envelopes go through the same comparison).
 */
import { describe, expect, it } from 'vitest';
import { runStructureCampaign } from '../differential/compiled-oracle.js';

/** CPU-bound: about 8 s alone on one core, several times that on a loaded machine. */
const CAMPAIGN_TIMEOUT_MS = 180_000;

describe('compiled SOAP decoder vs the interpreted reference: differential', () => {
  it('agrees on 25,000 structure-stressing bodies (fixed seed, random chunking)', () => {
    const tally = runStructureCampaign(20261126, 25_000);
    expect(tally.mismatches.slice(0, 3)).toEqual([]);
    expect(tally.cases).toBe(25_000);
    expect(tally.decoded).toBeGreaterThan(15_000);
    expect(tally.faults).toBeGreaterThan(2_000);
    expect(tally.withExtras).toBeGreaterThan(5_000);
    expect(tally.withItems).toBeGreaterThan(2_000);
  }, CAMPAIGN_TIMEOUT_MS);
});
