/**
 * XML-aware mutations of a SOAP draft: elements missing, duplicated, renamed, misplaced or
 * unknown; extreme values; entities, CDATA, xsi:nil; envelope namespaces, prefixes, headers,
 * declarations and DOCTYPEs; and the charset story (declared vs actual encoding, BOMs).
 */
import { operationList } from '../../shared/catalogue/index.js';
import { INSERT_FAMILY } from './oracle.js';
import { NS, SOAP11, SOAP12, type Draft, type SoapDraft, type XmlElement } from './corpus.js';
import type { Rng } from './prng.js';
import { extremeFor, hostileString, hugeLength } from './values.js';

const PARAM_TYPES = new Map<string, string>();
for (const op of operationList) {
  for (const p of op.params) {
    if (typeof p.type === 'string') PARAM_TYPES.set(p.name, p.type);
    else if (typeof p.type.item === 'object') for (const f of p.type.item.fields) PARAM_TYPES.set(f.name, f.type);
  }
}
const PARAM_NAMES = [...PARAM_TYPES.keys()];
const OP_NAMES = operationList.map((o) => o.name);

/** Every element of the parameter tree, with the list that holds it. */
function allElements(params: XmlElement[]): { list: XmlElement[]; index: number; el: XmlElement }[] {
  const out: { list: XmlElement[]; index: number; el: XmlElement }[] = [];
  const walk = (list: XmlElement[]): void => {
    list.forEach((el, index) => {
      out.push({ list, index, el });
      if (el.children) walk(el.children);
    });
  };
  walk(params);
  return out;
}

function leaves(params: XmlElement[]): XmlElement[] {
  return allElements(params)
    .map((e) => e.el)
    .filter((e) => e.children === undefined);
}

const ENTITY_TEXT = ['&amp;&lt;&gt;&quot;&apos;', '&#65;&#x42;', '&#x10FFFF;', '&#0;', '&#xD800;', '&#xFFFE;', '&#1;', '&unknown;', '&', '&#;', '&#x110000;', '&#65'];

/** Mutations of the parameters inside the operation element. */
function mutateParams(rng: Rng, s: SoapDraft): string {
  const els = allElements(s.params);
  const target = els.length > 0 ? rng.pick(els) : null;
  const leafList = leaves(s.params);
  const leaf = leafList.length > 0 ? rng.pick(leafList) : null;
  switch (rng.int(16)) {
    case 0:
      if (target) target.list.splice(target.index, 1);
      return 'xml.drop';
    case 1:
      if (target) target.list.splice(target.index, 0, structuredClone(target.el));
      return 'xml.duplicate';
    case 2:
      if (target) target.el.name = rng.pick([...PARAM_NAMES, target.el.name.toLowerCase(), target.el.name.toUpperCase(), 'Evento', 'pevento', '']);
      return 'xml.rename';
    case 3:
      s.params.splice(rng.int(s.params.length + 1), 0, { name: rng.pick(['Extra', 'Rumbo', 'Crudo', 'Sensores', 'x:y', 'a-b']), text: hostileString(rng) });
      return 'xml.unknown-element';
    case 4:
      if (leaf) leaf.text = extremeFor(rng, PARAM_TYPES.get(leaf.name) ?? 'string');
      return 'xml.extreme-value';
    case 5:
      if (leaf) {
        leaf.raw = rng.pick(ENTITY_TEXT);
        delete leaf.text;
      }
      return 'xml.entity';
    case 6:
      if (leaf) {
        leaf.raw = `<![CDATA[${rng.pick([leaf.text ?? '', ']]>', '<x>&amp;', hostileString(rng).replaceAll(']]>', '')])}]]>`;
      }
      return 'xml.cdata';
    case 7:
      if (target) {
        target.el.attrs = rng.pick(['xsi:nil="true"', 'xsi:nil="1"', 'xsi:type="xsd:int"', 'xmlns=""', 'a="1" a="2"', 'x:y="1"', `xmlns="${NS}x"`]);
        if (rng.chance(0.5)) {
          delete target.el.text;
          delete target.el.children;
        }
      }
      return 'xml.attribute';
    case 8:
      if (target && els.length > 1) {
        const other = rng.pick(els).el;
        if (other !== target.el) (other.children ??= []).push(structuredClone(target.el));
      }
      return 'xml.nest';
    case 9:
      s.params.reverse();
      return 'xml.reorder';
    case 10:
      if (leaf) leaf.text = 'z'.repeat(hugeLength(rng));
      return 'xml.huge-value';
    case 11: {
      const array = s.params.find((p) => p.children !== undefined && (p.name === 'Eventos' || p.name === 'Sensores'));
      if (array?.children && array.children.length > 0) {
        const item = array.children[0]!;
        const n = rng.pick([0, 1, 50, 200, 1000]);
        array.children = Array.from({ length: n }, (_, i) => {
          const c = structuredClone(item);
          if (c.children && rng.chance(0.3)) {
            const f = rng.pick(c.children);
            f.text = extremeFor(rng, PARAM_TYPES.get(f.name) ?? 'string');
          } else if (c.children) for (const f of c.children) if (f.name === 'Codigo') f.text = `b${i}`;
          return c;
        });
      }
      return 'xml.array-size';
    }
    case 12:
      if (leaf) leaf.prefix = rng.pick(['tns', 'soap', 'xsd']);
      return 'xml.element-prefix';
    case 13:
      if (leaf) leaf.raw = `${leaf.text ?? ''}<!-- c --><?pi x?>`;
      return 'xml.comment-pi';
    case 14:
      if (leaf) leaf.raw = `<${rng.pick(['a', 'b'])}>${leaf.text ?? ''}`;
      return 'xml.unclosed';
    default:
      if (leaf) leaf.text = `${leaf.text ?? ''}${rng.pick(['Ñandú', '€', '😀', 'ÿ', '\u00a0', 'İ'])}`;
      return 'xml.non-ascii';
  }
}

/** An event's date or number pushed to the edge of what the stores can hold (the -3 / -5 boundary). */
function mutateEventValue(rng: Rng, s: SoapDraft): string {
  const fields = leaves(s.params).filter((e) => PARAM_TYPES.get(e.name) === 'dateTime' || PARAM_TYPES.get(e.name) === 'double');
  if (fields.length > 0) {
    const f = rng.pick(fields);
    f.text = extremeFor(rng, PARAM_TYPES.get(f.name)!);
  }
  return 'xml.event-extreme';
}

/** Mutations of the envelope around the operation element. */
function mutateEnvelope(rng: Rng, s: SoapDraft, d: Draft): string {
  switch (rng.int(12)) {
    case 0:
      s.envelopeNs = rng.pick([s.envelopeNs === SOAP11 ? SOAP12 : SOAP11, 'http://example.com/envelope', '', 'http://schemas.xmlsoap.org/soap/envelope']);
      return 'env.namespace';
    case 1:
      s.prefix = rng.pick(['SOAP-ENV', 's', 'soapenv', 'S', 'ns0', 'xml', 'xmlns']);
      return 'env.prefix';
    case 2:
      s.header = rng.pick([
        `<t:Trace xmlns:t="${NS}">x</t:Trace>`,
        `<t:Auth xmlns:t="urn:x" ${s.prefix}:mustUnderstand="1">x</t:Auth>`,
        `<t:Auth xmlns:t="urn:x" ${s.prefix}:mustUnderstand="true"/>`,
        '',
        '<unbound:x/>',
      ]);
      return 'env.header';
    case 3:
      s.declaration = rng.pick([null, '<?xml version="1.0"?>', '<?xml version="1.1" encoding="utf-8"?>', '<?xml version="2.0"?>', ' <?xml version="1.0"?>', '<?xml encoding="utf-8"?>', '<?xml version="1.0" standalone="yes"?>']);
      return 'env.declaration';
    case 4:
      s.declaration = `${s.declaration ?? ''}${rng.pick(['<!DOCTYPE x [<!ENTITY a "b">]>', '<!DOCTYPE x SYSTEM "http://127.0.0.1:1/x.dtd">', '<!DOCTYPE x>'])}`;
      return 'env.doctype';
    case 5:
      s.opName = rng.pick([...OP_NAMES, 'Unknown', s.opName.toLowerCase(), `${s.opName}Response`, '']);
      return 'env.operation-name';
    case 6:
      s.opNs = rng.pick(['', 'http://tempuri.org', 'http://example.com/', 'urn:x', `${NS}${s.opName}`]);
      return 'env.operation-namespace';
    case 7:
      s.trailer = rng.pick(['<x/>', 'garbage', '<!-- c -->', '\n\n', `<${s.prefix}:Envelope/>`, '\0']);
      return 'env.trailer';
    case 8:
      s.params = [{ name: 'Body', prefix: s.prefix, children: s.params }];
      return 'env.nested-body';
    case 9: {
      // An envelope that does not match the Content-Type's SOAP version.
      const h = d.headers.find(([k]) => k === 'Content-Type');
      if (h) h[1] = h[1].startsWith('text/xml') ? 'application/soap+xml; charset=utf-8' : 'text/xml; charset=utf-8';
      return 'env.version-mismatch';
    }
    case 10:
      s.params = [];
      return 'env.empty-operation';
    default:
      s.declaration = `${s.declaration ?? ''}<?pi data?><!-- comment -->`;
      return 'env.prolog';
  }
}

const CHARSETS = ['utf-8', 'UTF-8', 'iso-8859-1', 'ISO-8859-1', 'latin1', 'us-ascii', 'windows-1252', 'utf-16', 'utf-16le', 'UTF-16BE', 'x-unknown', 'utf-32', 'utf8', '', '"utf-8"', 'ebcdic-cp-us', 'shift_jis'];

/** Declared charsets (Content-Type, XML declaration), actual byte encoding and BOMs. */
function mutateEncoding(rng: Rng, s: SoapDraft, d: Draft): string {
  switch (rng.int(5)) {
    case 0: {
      const h = d.headers.find(([k]) => k === 'Content-Type');
      const cs = rng.pick(CHARSETS);
      if (h) h[1] = h[1].replace(/;\s*charset=[^;]*/i, '') + (rng.chance(0.9) ? `; charset=${cs}` : `; charset=${cs}; charset=utf-8`);
      return 'enc.content-type-charset';
    }
    case 1:
      s.declaration = `<?xml version="1.0" encoding="${rng.pick(CHARSETS)}"?>`;
      return 'enc.declaration';
    case 2:
      s.charset = rng.pick(['latin1', 'utf16le', 'utf16be', 'utf8'] as const);
      return 'enc.actual';
    case 3:
      s.bom = !s.bom;
      if (rng.chance(0.5)) s.charset = rng.pick(['utf8', 'utf16le', 'utf16be'] as const);
      return 'enc.bom';
    default: {
      // A consistent non-UTF-8 request: latin1 bytes declared as ISO-8859-1, with accents.
      s.charset = 'latin1';
      s.declaration = '<?xml version="1.0" encoding="ISO-8859-1"?>';
      const h = d.headers.find(([k]) => k === 'Content-Type');
      if (h) h[1] = h[1].replace(/;\s*charset=[^;]*/i, '');
      const leaf = leaves(s.params).find((e) => e.name === 'Dominio' || e.name === 'Codigo' || e.name === 'MSG');
      if (leaf) leaf.text = `${leaf.text ?? ''}ÑÉ`;
      return 'enc.latin1';
    }
  }
}

export function mutateSoap(rng: Rng, d: Draft): string {
  const s = d.soap;
  if (s === null) return 'xml.none';
  return rng.weighted<() => string>([
    [6, () => mutateParams(rng, s)],
    [INSERT_FAMILY.has(d.op ?? '') ? 4 : 0, () => mutateEventValue(rng, s)],
    [2, () => mutateEnvelope(rng, s, d)],
    [2, () => mutateEncoding(rng, s, d)],
  ])();
}
