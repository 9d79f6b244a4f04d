/**
 * Builds case N of a run: picks a seed, applies structural mutations (XML, form, headers,
 * target), renders the body, applies byte-level mutations, then framing ones. Everything comes
 * from Rng(seed, N), so a case is rebuilt alone from its two numbers.
 */
import { buildCorpus, cloneDraft, renderBody, type Draft } from './corpus.js';
import { mutateFraming, mutateForm, mutateHeaders, mutateTarget } from './mutate-http.js';
import { mutateSoap } from './mutate-xml.js';
import { Rng } from './prng.js';
import { BAD_BYTES } from './values.js';

export interface FuzzCase {
  seed: number;
  index: number;
  draft: Draft;
  /** Names of the mutations applied, in order (empty: the seed as is). */
  mutations: string[];
}

const CORPUS = buildCorpus();

/** Metadata pages are cheap and few-shaped: fuzz them less than operations. */
const SEED_WEIGHTS: readonly (readonly [number, number])[] = CORPUS.map((d, i) => [d.binding === 'meta' ? 1 : 4, i] as const);

export function corpus(): readonly Draft[] {
  return CORPUS;
}

function renderedBody(d: Draft): Buffer {
  const c = cloneDraft(d);
  renderBody(c);
  return c.body ?? Buffer.alloc(0);
}

function insertAt(body: Buffer, at: number, bytes: Buffer): Buffer {
  return Buffer.concat([body.subarray(0, at), bytes, body.subarray(at)]);
}

/** Byte-level mutations of a rendered body (or of the query string of a body-less request). */
function mutateBytes(rng: Rng, body: Buffer): { body: Buffer; name: string } {
  const n = body.length;
  const at = rng.int(n + 1);
  const len = Math.min(n - at, rng.pick([1, 2, 4, 16, 64, 512]));
  switch (rng.int(10)) {
    case 0: {
      const out = Buffer.from(body);
      const flips = n === 0 ? 0 : rng.range(1, 4);
      for (let i = 0; i < flips; i++) {
        const at = rng.int(n);
        out[at] = out[at]! ^ (1 << rng.int(8));
      }
      return { body: out, name: 'bytes.flip' };
    }
    case 1:
      return { body: insertAt(body, at, rng.bytes(rng.range(1, 16))), name: 'bytes.insert-random' };
    case 2:
      return { body: insertAt(body, at, rng.pick(BAD_BYTES)), name: 'bytes.insert-invalid-utf8' };
    case 3:
      return { body: Buffer.concat([body.subarray(0, at), body.subarray(at + len)]), name: 'bytes.delete' };
    case 4:
      return { body: insertAt(body, at, body.subarray(at, at + len)), name: 'bytes.duplicate' };
    case 5:
      return { body: body.subarray(0, at), name: 'bytes.truncate' };
    case 6: {
      const other = renderedBody(rng.pick(CORPUS));
      const from = rng.int(other.length + 1);
      const piece = other.subarray(from, from + rng.range(1, 400));
      return { body: rng.chance(0.5) ? insertAt(body, at, piece) : Buffer.concat([body.subarray(0, at), piece]), name: 'bytes.splice' };
    }
    case 7: {
      const bad = rng.pick(BAD_BYTES);
      return { body: Buffer.concat([body.subarray(0, at), bad, body.subarray(Math.min(n, at + bad.length))]), name: 'bytes.overwrite-invalid-utf8' };
    }
    case 8:
      return { body: insertAt(body, at, Buffer.from([rng.pick([0x00, 0x01, 0x08, 0x0b, 0x0c, 0x1b, 0x1f, 0x7f])])), name: 'bytes.control-char' };
    default:
      return { body: insertAt(body, rng.chance(0.5) ? 0 : at, rng.pick([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from([0xff, 0xfe]), Buffer.from([0xfe, 0xff])])), name: 'bytes.bom' };
  }
}

type Family = 'soap' | 'form' | 'headers' | 'target' | 'bytes' | 'framing';

function families(d: Draft): readonly (readonly [number, Family])[] {
  const list: [number, Family][] = [
    [10, 'headers'],
    [8, 'target'],
    [3, 'framing'],
  ];
  if (d.soap !== null) list.push([40, 'soap'], [20, 'bytes']);
  if (d.form !== null) list.push([35, 'form'], [d.binding === 'post' ? 12 : 6, 'bytes']);
  return list;
}

export function generateCase(seed: number, index: number): FuzzCase {
  const rng = new Rng(seed, index);
  const draft = cloneDraft(CORPUS[rng.weighted(SEED_WEIGHTS)]!);
  const count = rng.weighted([
    [5, 0],
    [55, 1],
    [25, 2],
    [15, rng.range(3, 5)],
  ]);
  const chosen: Family[] = [];
  for (let i = 0; i < count; i++) chosen.push(rng.weighted(families(draft)));
  const mutations: string[] = [];
  // Structure first; bytes once rendered; framing last (it needs the final body length).
  for (const f of chosen) {
    if (f === 'soap') mutations.push(mutateSoap(rng, draft));
    else if (f === 'form') mutations.push(mutateForm(rng, draft));
    else if (f === 'headers') mutations.push(mutateHeaders(rng, draft));
    else if (f === 'target') mutations.push(mutateTarget(rng, draft));
  }
  renderBody(draft);
  for (const f of chosen) {
    if (f !== 'bytes') continue;
    if (draft.binding === 'get' && draft.query !== null) {
      // A request line carries no raw bytes ≥ 0x80 or controls: keep the query printable.
      const q = mutateBytes(rng, Buffer.from(draft.query, 'latin1'));
      draft.query = q.body.toString('latin1').replace(/[^\x21-\x7e]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`);
      mutations.push(`query-${q.name}`);
    } else if (draft.body !== null) {
      const b = mutateBytes(rng, draft.body);
      draft.body = b.body;
      mutations.push(b.name);
    }
  }
  for (const f of chosen) if (f === 'framing') mutations.push(mutateFraming(rng, draft));
  // A body on anything but POST leaves bytes the server may not read: keep them off shared connections.
  if (draft.method !== 'POST' && draft.body !== null && draft.body.length > 0) draft.dedicated = true;
  return { seed, index, draft, mutations };
}
