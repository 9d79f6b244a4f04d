/**
 * Wire version 3 held to the reference implementations on the whole corpus (test/helpers/
 * event-corpus.ts: generated, edge and fuzzer-hostile records):
 * - Debian's protoc (C++ libprotobuf): `--decode` prints every message we write as the record we
 *   wrote, and the messages `--encode` writes from the records decode to them;
 * - Google's Python runtime (upb) with the code protoc generates from events.proto: reads every
 *   message as the record, writes back the very same bytes (ours are canonical), and on randomly
 *   mutated messages refuses whatever our decoder refuses for a malformed message, reads the same
 *   values where both accept.
 * It needs no service, only the tools test/setup/foreign-consumers.ts installs, which is why it
 * sits in this layer.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeEvent, encodeEvent, WireFormatError } from '../../shared/events/wire.js';
import { eventCorpus } from '../helpers/event-corpus.js';
import { corpusBytes, corpusMessages, expectedFields, generatedCode, parseCorpusText, protoc, ROOT, textEntry, venvPython, type Shown } from '../helpers/foreign-readers.js';
import { Rng } from '../fuzz/prng.js';

const CORPUS = eventCorpus();
const MESSAGES = CORPUS.map(({ id, event }) => encodeEvent(id, event, 3));

let dir: string;
let python: string;

beforeAll(() => {
  python = venvPython();
  dir = generatedCode();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Python's reading of each message (test/foreign/protobuf_corpus.py). */
function pythonRead(messages: readonly Buffer[]): (Record<string, Shown> & { error?: string; reserialized?: string })[] {
  const framed = Buffer.concat(messages.flatMap((m) => [Buffer.from(new Uint32Array([m.length]).buffer), m]));
  const out = execFileSync(python, [path.join(ROOT, 'test/foreign/protobuf_corpus.py'), dir], { input: framed, maxBuffer: 1 << 30 });
  return out
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, Shown> & { error?: string; reserialized?: string });
}

describe('wire version 3 against protoc (C++ libprotobuf)', () => {
  it('protoc --decode reads every message we write as the record we wrote', () => {
    const text = protoc(dir, '--decode', corpusBytes(MESSAGES)).toString('utf8');
    const read = parseCorpusText(text);
    expect(read).toHaveLength(CORPUS.length);
    CORPUS.forEach(({ id, event }, i) => expect(read[i], `record ${i}`).toEqual(expectedFields(id, event)));
  });

  it('we read every message protoc --encode writes from the records', () => {
    const written = corpusMessages(protoc(dir, '--encode', CORPUS.map(({ id, event }) => textEntry(id, event)).join('')));
    expect(written).toHaveLength(CORPUS.length);
    CORPUS.forEach((entry, i) => {
      expect(decodeEvent(written[i]!), `record ${i}`).toEqual(entry);
      // libprotobuf writes proto3 as we do: the same bytes.
      expect(written[i]!.equals(MESSAGES[i]!), `bytes of record ${i}`).toBe(true);
    });
  });
});

describe('wire version 3 against Python’s protobuf (upb)', () => {
  it('reads every message we write as the record we wrote, and writes back the same bytes', () => {
    const read = pythonRead(MESSAGES);
    expect(read).toHaveLength(CORPUS.length);
    CORPUS.forEach(({ id, event }, i) => {
      const { reserialized, ...fields } = read[i]!;
      expect(fields, `record ${i}`).toEqual(expectedFields(id, event));
      expect(reserialized, `bytes of record ${i}`).toBe(MESSAGES[i]!.toString('hex'));
      expect(decodeEvent(Buffer.from(reserialized!, 'hex'))).toEqual(CORPUS[i]);
    });
  });

  it('on mutated messages, refuses what we refuse as malformed and reads what we read the same', () => {
    const mutated: Buffer[] = [];
    for (let i = 0; i < 2000; i++) {
      const rng = new Rng(4242, i);
      const m = Buffer.from(MESSAGES[i % 60]!);
      for (let k = rng.range(1, 3); k > 0; k--) m[rng.int(m.length)] = rng.int(256);
      // Byte 0 picks the version: keep these protobuf.
      if (m[0] === 0x7b || m[0] === 2) m[0] = 0x09;
      mutated.push(m);
    }
    const read = pythonRead(mutated);
    let bothRead = 0;
    let bothRefused = 0;
    mutated.forEach((m, i) => {
      const theirs = read[i]!;
      let ours: ReturnType<typeof decodeEvent> | WireFormatError;
      try {
        ours = decodeEvent(m);
      } catch (err) {
        expect(err).toBeInstanceOf(WireFormatError);
        ours = err as WireFormatError;
      }
      if (theirs.error !== undefined) {
        // Malformed for the reference: malformed for us too.
        expect(ours, `mutation ${i}: Python refused (${theirs.error})`).toBeInstanceOf(WireFormatError);
        bothRefused++;
      } else if (ours instanceof WireFormatError) {
        // Well-formed protobuf we refuse only for a value no store can hold.
        expect(ours.message, `mutation ${i}`).toMatch(/is not a number|has no valid id|is not whole epoch ms/);
      } else {
        const { reserialized: _, ...fields } = theirs;
        expect(fields, `mutation ${i}`).toEqual(expectedFields(ours.id, ours.event));
        bothRead++;
      }
    });
    // The mutations exercise both sides.
    expect(bothRead).toBeGreaterThan(200);
    expect(bothRefused).toBeGreaterThan(200);
  });
});
