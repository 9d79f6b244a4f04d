// Lowers the glibc a prebuilt ELF shared object asks for, when what it asks for beyond the target
// is only the C23 variants of scanf/strtol-family functions (glibc 2.38 added `__isoc23_*`, and
// compilers on newer distributions route sscanf/strtol/strtoul calls to them). The C23 variants
// differ from the ones every glibc has only in accepting binary (`0b101`, `%b`) input, so each
// reference is bound to its older equivalent instead:
//
//   __isoc23_sscanf (GLIBC_2.38)  ->  __isoc99_sscanf (renamed in place: "23" -> "99")
//   __isoc23_strtol (GLIBC_2.38)  ->  strtol          (the name's own suffix: no byte of the string table changes)
//
// Each such reference becomes unversioned (the library's default version binds it), and the
// version need that nothing refers to any more is pointed at a version the target has, so the
// loader no longer checks for it. Anything else needing the newer glibc is refused with its name:
// this routine never guesses. ELF64 little-endian only (x86-64, aarch64). Pure data edit, no tools.
//
// Used by scripts/runtime/uws-glibc.mjs at `npm install`; tested in
// test/unit/scripts/runtime/elf-glibc.unit.test.ts against the real uWebSockets.js binary and objdump.

const SHT_DYNSYM = 11;
const SHT_DYNAMIC = 6;
const SHT_GNU_VERNEED = 0x6ffffffe;
const SHT_GNU_VERSYM = 0x6fffffff;
const VER_NDX_GLOBAL = 1;

/** The older equivalent of each C23 function glibc 2.38 added, by how the reference is rewritten. */
/** @type {Record<string, string>} */
const C23_REPLACEMENTS = {
  __isoc23_sscanf: '__isoc99_sscanf',
  __isoc23_scanf: '__isoc99_scanf',
  __isoc23_fscanf: '__isoc99_fscanf',
  __isoc23_vsscanf: '__isoc99_vsscanf',
  __isoc23_vscanf: '__isoc99_vscanf',
  __isoc23_vfscanf: '__isoc99_vfscanf',
  __isoc23_strtol: 'strtol',
  __isoc23_strtoul: 'strtoul',
  __isoc23_strtoll: 'strtoll',
  __isoc23_strtoull: 'strtoull',
  __isoc23_strtoimax: 'strtoimax',
  __isoc23_strtoumax: 'strtoumax',
};

/**
 * [major, minor] of a `GLIBC_x.y[.z]` version name, or null for another name.
 * @param {string} name
 * @returns {[number, number] | null}
 */
function glibcVersion(name) {
  const m = /^GLIBC_(\d+)\.(\d+)/.exec(name);
  return m ? [Number(m[1]), Number(m[2])] : null;
}

/** @type {(v: [number, number], target: [number, number]) => boolean} */
const newerThan = (v, target) => v[0] > target[0] || (v[0] === target[0] && v[1] > target[1]);

/** @param {Buffer} buf @param {number} offset */
function cString(buf, offset) {
  const end = buf.indexOf(0, offset);
  return buf.toString('latin1', offset, end);
}

/**
 * @typedef {{ type: number, offset: number, size: number, link: number, entsize: number }} Section
 * @typedef {{ at: number, file: string, hash: number, index: number, nameOffset: number, name: string }} VersionNeed
 */

/** @param {Buffer} buf @returns {Section[]} */
function sections(buf) {
  if (buf.readUInt32BE(0) !== 0x7f454c46) throw new Error('not an ELF file');
  if (buf[4] !== 2 || buf[5] !== 1) throw new Error('not a 64-bit little-endian ELF file');
  const shoff = Number(buf.readBigUInt64LE(0x28));
  const shentsize = buf.readUInt16LE(0x3a);
  const shnum = buf.readUInt16LE(0x3c);
  const out = [];
  for (let i = 0; i < shnum; i++) {
    const at = shoff + i * shentsize;
    out.push({
      type: buf.readUInt32LE(at + 4),
      offset: Number(buf.readBigUInt64LE(at + 0x18)),
      size: Number(buf.readBigUInt64LE(at + 0x20)),
      link: buf.readUInt32LE(at + 0x28),
      entsize: Number(buf.readBigUInt64LE(at + 0x38)),
    });
  }
  return out;
}

/**
 * Walks the version-needs section: each `verneed` entry (one per library) with the offsets of its
 * `vernaux` entries (one per version it needs).
 */
/** @param {Buffer} buf @param {Section} verneed @returns {Generator<{ at: number, auxes: number[] }>} */
function* verneedEntries(buf, verneed) {
  let at = verneed.offset;
  for (;;) {
    /** @type {number[]} */
    const auxes = [];
    const count = buf.readUInt16LE(at + 2);
    let aux = at + buf.readUInt32LE(at + 8);
    for (let i = 0; i < count; i++) {
      auxes.push(aux);
      const next = buf.readUInt32LE(aux + 12);
      if (next === 0) break;
      aux += next;
    }
    yield { at, auxes };
    const next = buf.readUInt32LE(at + 12);
    if (next === 0) return;
    at += next;
  }
}

/** The version needs: every `vernaux` entry with where it lives, its name, index and library. */
/** @param {Buffer} buf @param {Section} verneed @param {Section} dynstr @returns {VersionNeed[]} */
function versionNeeds(buf, verneed, dynstr) {
  /** @type {VersionNeed[]} */
  const needs = [];
  for (const { at, auxes } of verneedEntries(buf, verneed)) {
    const file = cString(buf, dynstr.offset + buf.readUInt32LE(at + 4));
    for (const aux of auxes) {
      needs.push({
        at: aux,
        file,
        hash: buf.readUInt32LE(aux),
        index: buf.readUInt16LE(aux + 6),
        nameOffset: buf.readUInt32LE(aux + 8),
        name: cString(buf, dynstr.offset + buf.readUInt32LE(aux + 8)),
      });
    }
  }
  return needs;
}

/**
 * Every string-table offset the file refers to besides the dynamic symbols' names: version
 * names, needed files, and the dynamic section's string entries (DT_NEEDED, DT_SONAME, DT_RPATH,
 * DT_RUNPATH). An in-place rename must not change a string another entry points into.
 */
/** @param {Buffer} buf @param {Section[]} all @param {Section} verneed @returns {number[]} */
function otherStringRefs(buf, all, verneed) {
  /** @type {number[]} */
  const refs = [];
  for (const { at, auxes } of verneedEntries(buf, verneed)) {
    refs.push(buf.readUInt32LE(at + 4));
    for (const aux of auxes) refs.push(buf.readUInt32LE(aux + 8));
  }
  const dynamic = all.find((s) => s.type === SHT_DYNAMIC);
  if (dynamic) {
    for (let at2 = dynamic.offset; at2 < dynamic.offset + dynamic.size; at2 += 16) {
      const tag = Number(buf.readBigInt64LE(at2));
      if (tag === 1 || tag === 14 || tag === 15 || tag === 29) refs.push(Number(buf.readBigUInt64LE(at2 + 8)));
    }
  }
  return refs;
}

/**
 * The dynamic symbol table, its strings and the version tables, or null for a file without
 * symbol versions (nothing to lower).
 * @param {Buffer} buf
 */
function dynamicTables(buf) {
  const all = sections(buf);
  const dynsym = all.find((s) => s.type === SHT_DYNSYM);
  const versym = all.find((s) => s.type === SHT_GNU_VERSYM);
  const verneed = all.find((s) => s.type === SHT_GNU_VERNEED);
  const dynstr = dynsym ? all[dynsym.link] : undefined;
  if (!dynsym || !versym || !verneed || !dynstr) return null;
  const count = dynsym.size / dynsym.entsize;
  return { all, dynsym, versym, verneed, dynstr, count, needs: versionNeeds(buf, verneed, dynstr) };
}

/**
 * Whether a version need asks for a glibc newer than `target`.
 * @param {VersionNeed} need @param {[number, number]} target
 */
function beyondTarget(need, target) {
  const v = glibcVersion(need.name);
  return v !== null && newerThan(v, target);
}

/**
 * The glibc versions `buf` (an ELF shared object) requires, and which symbols need a version
 * beyond `target` ([major, minor]).
 * @param {Buffer} buf @param {[number, number]} target
 * @returns {{ versions: string[], beyond: { symbol: string, version: string }[] }}
 */
export function glibcNeeds(buf, target) {
  const t = dynamicTables(buf);
  if (t === null) return { versions: [], beyond: [] };
  const versions = [...new Set(t.needs.map((n) => n.name).filter((n) => glibcVersion(n) !== null))];
  const beyondIndexes = new Map(t.needs.filter((n) => beyondTarget(n, target)).map((n) => [n.index, n.name]));
  const beyond = [];
  for (let i = 0; i < t.count; i++) {
    const version = beyondIndexes.get(buf.readUInt16LE(t.versym.offset + i * 2) & 0x7fff);
    if (version === undefined) continue;
    const at = t.dynsym.offset + i * t.dynsym.entsize;
    beyond.push({ symbol: cString(buf, t.dynstr.offset + buf.readUInt32LE(at)), version });
  }
  return { versions, beyond };
}

/**
 * Rewrites `buf` in place so that it needs no glibc newer than `target` ([major, minor]).
 * Returns the references it rebound (empty when there was nothing to do); throws, changing
 * nothing, when a symbol beyond `target` has no known older equivalent.
 * @param {Buffer} buf @param {[number, number]} target
 * @returns {{ symbol: string, now: string }[]}
 */
export function lowerGlibcNeeds(buf, target) {
  const t = dynamicTables(buf);
  if (t === null) return [];
  const isLibc = (/** @type {VersionNeed} */ n) => n.file.startsWith('libc.so');
  const tooNew = t.needs.filter((n) => isLibc(n) && beyondTarget(n, target));
  const otherTooNew = t.needs.filter((n) => !isLibc(n) && beyondTarget(n, target));
  if (otherTooNew.length > 0) throw new Error(`needs ${otherTooNew.map((n) => `${n.name} of ${n.file}`).join(', ')}: not a C23 libc function, cannot lower`);
  if (tooNew.length === 0) return [];
  // The oldest libc version the file already needs (the target has it): what a dropped need is pointed at.
  const order = (/** @type {VersionNeed} */ n) => {
    const v = glibcVersion(n.name) ?? [0, 0];
    return v[0] * 1000 + v[1];
  };
  const base = t.needs
    .filter((n) => isLibc(n) && glibcVersion(n.name) !== null && !beyondTarget(n, target))
    .sort((a, b) => order(a) - order(b))[0];
  if (base === undefined) throw new Error('needs no older libc version to point the newer ones at');

  const tooNewIndexes = new Set(tooNew.map((n) => n.index));
  const plan = [];
  for (let i = 0; i < t.count; i++) {
    if (!tooNewIndexes.has(buf.readUInt16LE(t.versym.offset + i * 2) & 0x7fff)) continue;
    const at = t.dynsym.offset + i * t.dynsym.entsize;
    const nameOffset = buf.readUInt32LE(at);
    const name = cString(buf, t.dynstr.offset + nameOffset);
    const replacement = C23_REPLACEMENTS[name];
    if (replacement === undefined) throw new Error(`${name} needs ${tooNew.map((n) => n.name).join('/')}: no older equivalent known, cannot lower`);
    plan.push({ index: i, at, nameOffset, name, replacement });
  }

  // Check every rename before changing a byte: no other name may point into the bytes it changes
  // (string tables share tails, and two symbols may share one name).
  const planned = new Set(plan.map((p) => p.index));
  const refs = otherStringRefs(buf, t.all, t.verneed);
  for (let i = 0; i < t.count; i++) if (!planned.has(i)) refs.push(buf.readUInt32LE(t.dynsym.offset + i * t.dynsym.entsize));
  for (const p of plan) {
    if (p.name.endsWith(p.replacement)) continue; // a suffix: the symbol's offset moves, the bytes stay
    if (p.replacement.length !== p.name.length) throw new Error(`${p.name} -> ${p.replacement}: neither a suffix nor the same length`);
    let lastChanged = 0;
    for (let k = 0; k < p.name.length; k++) if (p.name[k] !== p.replacement[k]) lastChanged = k;
    if (refs.some((r) => r >= p.nameOffset && r <= p.nameOffset + lastChanged)) {
      throw new Error(`${p.name}: another name shares its string, cannot rename in place`);
    }
  }

  for (const p of plan) {
    if (p.name.endsWith(p.replacement)) {
      buf.writeUInt32LE(p.nameOffset + p.name.length - p.replacement.length, p.at);
    } else {
      buf.write(p.replacement, t.dynstr.offset + p.nameOffset, 'latin1');
    }
    buf.writeUInt16LE(VER_NDX_GLOBAL, t.versym.offset + p.index * 2);
  }
  for (const n of tooNew) {
    buf.writeUInt32LE(base.hash, n.at);
    buf.writeUInt32LE(base.nameOffset, n.at + 8);
  }
  return plan.map((p) => ({ symbol: p.name, now: p.replacement }));
}
