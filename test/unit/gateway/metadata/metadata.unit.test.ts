import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SaxesParser } from 'saxes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  httpBindable,
  isArrayParam,
  operationList,
  pEvento as pEventoType,
  type OperationDef,
} from '../../../../shared/catalogue/index.js';
import { renderDisco } from '../../../../gateway/metadata/disco.js';
import { renderHelpPage, renderOperationPage } from '../../../../gateway/metadata/help-page.js';
import { renderWsdl } from '../../../../gateway/metadata/wsdl.js';
import { escapeHtml, escapeXmlAttr, escapeXmlText, stripInvalidXmlChars } from '../../../../gateway/metadata/xml-escape.js';

// ---------------------------------------------------------------------------------------------
// A tiny namespace-aware DOM over saxes, enough to query the generated documents.

interface XNode {
  readonly name: string;
  readonly local: string;
  readonly uri: string;
  readonly attrs: ReadonlyMap<string, string>;
  readonly scope: Readonly<Record<string, string>>;
  readonly children: XNode[];
  text: string;
}

function parseXml(xml: string): XNode {
  const parser = new SaxesParser({ xmlns: true });
  const stack: XNode[] = [];
  let root: XNode | undefined;
  parser.on('opentag', (tag) => {
    const parent = stack[stack.length - 1];
    const attrs = new Map<string, string>();
    for (const a of Object.values(tag.attributes)) attrs.set(a.name, a.value);
    const node: XNode = {
      name: tag.name,
      local: tag.local,
      uri: tag.uri,
      attrs,
      scope: { ...(parent?.scope ?? {}), ...tag.ns },
      children: [],
      text: '',
    };
    if (parent) parent.children.push(node);
    else root = node;
    stack.push(node);
  });
  parser.on('text', (t) => {
    const top = stack[stack.length - 1];
    if (top) top.text += t;
  });
  parser.on('closetag', () => {
    stack.pop();
  });
  parser.write(xml).close(); // saxes throws on any well-formedness error
  if (!root) throw new Error('no root element');
  return root;
}

const WSDL_NS = 'http://schemas.xmlsoap.org/wsdl/';
const XSD_NS = 'http://www.w3.org/2001/XMLSchema';
const SOAP_NS = 'http://schemas.xmlsoap.org/wsdl/soap/';
const SOAP12_NS = 'http://schemas.xmlsoap.org/wsdl/soap12/';
const HTTP_NS = 'http://schemas.xmlsoap.org/wsdl/http/';
const MIME_NS = 'http://schemas.xmlsoap.org/wsdl/mime/';

function kids(node: XNode, uri: string, local: string): XNode[] {
  return node.children.filter((c) => c.uri === uri && c.local === local);
}

function kid(node: XNode, uri: string, local: string): XNode {
  const found = kids(node, uri, local);
  if (found.length !== 1) throw new Error(`expected one ${local} under ${node.name}, found ${found.length}`);
  return found[0] as XNode;
}

function named(nodes: readonly XNode[], name: string): XNode {
  const found = nodes.filter((n) => n.attrs.get('name') === name);
  if (found.length !== 1) throw new Error(`expected one node named ${name}, found ${found.length}`);
  return found[0] as XNode;
}

function attr(node: XNode, name: string): string {
  const v = node.attrs.get(name);
  if (v === undefined) throw new Error(`${node.name} has no attribute ${name}`);
  return v;
}

/** Resolves a QName attribute value against the namespaces in scope. */
function qname(node: XNode, value: string): { uri: string; local: string } {
  const i = value.indexOf(':');
  const prefix = i < 0 ? '' : value.slice(0, i);
  const uri = node.scope[prefix];
  if (uri === undefined) throw new Error(`prefix ${prefix} not in scope`);
  return { uri, local: value.slice(i + 1) };
}

// ---------------------------------------------------------------------------------------------

const NS = 'http://tempuri.org/';
const URL = 'http://localhost:8080/service.asmx';
const opts = { namespace: NS, serviceUrl: URL };
const httpOps = operationList.filter(httpBindable);
const soapOnlyOps = operationList.filter((op) => !httpBindable(op));
const opNames = operationList.map((op) => op.name);

/**
 * The deployed service's declaration order, which its WSDL lists operations in. The catalogue keeps
 * it (an operation added later goes anywhere after, and needs no edit here); the WSDL follows the
 * catalogue.
 */
const DEPLOYED_ORDER = [
  'Login', 'Logout', 'InsertarEvento', 'LoginYInsertarEventos', 'LoginYInsertarEvento', 'LoginYInsertarEvento2',
  'InSession', 'ObtenerComando', 'ComandoProcesado', 'EstadoComando', 'CambiarClave', 'LoginYCambiarClave',
  'LoginYObtenerComando', 'LoginYComandoProcesado', 'LoginYEstadoComando', 'ConsultarVehiculosEnViaje',
];

describe('catalogue assumptions the metadata relies on', () => {
  it('has SOAP-only operations and HTTP-bindable operations', () => {
    expect(soapOnlyOps.map((o) => o.name).sort()).toEqual(['LoginYInsertarEvento2', 'LoginYInsertarEventos']);
    expect(httpOps.length).toBe(operationList.length - 2);
  });
});

describe('renderWsdl', () => {
  const wsdl = renderWsdl(opts);
  const defs = parseXml(wsdl);
  const types = kid(defs, WSDL_NS, 'types');
  const schema = kid(types, XSD_NS, 'schema');
  const elements = kids(schema, XSD_NS, 'element');
  const complexTypes = kids(schema, XSD_NS, 'complexType');
  const messages = kids(defs, WSDL_NS, 'message');
  const portTypes = kids(defs, WSDL_NS, 'portType');
  const bindings = kids(defs, WSDL_NS, 'binding');
  const service = kid(defs, WSDL_NS, 'service');

  function sequenceOf(node: XNode): XNode[] {
    const ct = node.local === 'complexType' ? node : kid(node, XSD_NS, 'complexType');
    const seqs = kids(ct, XSD_NS, 'sequence');
    return seqs.length === 0 ? [] : kids(seqs[0] as XNode, XSD_NS, 'element');
  }

  it('is a well-formed ASMX-shaped document: declaration, CRLF, two-space indent, no trailing newline', () => {
    expect(wsdl.startsWith('<?xml version="1.0" encoding="utf-8"?>\r\n<wsdl:definitions ')).toBe(true);
    expect(wsdl.endsWith('</wsdl:definitions>')).toBe(true);
    expect(/[^\r]\n/.test(wsdl)).toBe(false); // every LF is part of a CRLF
    expect(wsdl).toContain('\r\n  <wsdl:types>\r\n    <s:schema elementFormDefault="qualified" targetNamespace="http://tempuri.org/">');
    expect(defs.uri).toBe(WSDL_NS);
    expect(defs.local).toBe('definitions');
    expect(attr(defs, 'targetNamespace')).toBe(NS);
  });

  it('declares the ASMX namespaces in the ASMX order', () => {
    const firstLine = wsdl.split('\r\n')[1];
    expect(firstLine).toBe(
      '<wsdl:definitions xmlns:s="http://www.w3.org/2001/XMLSchema" xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap12/"' +
        ' xmlns:http="http://schemas.xmlsoap.org/wsdl/http/" xmlns:mime="http://schemas.xmlsoap.org/wsdl/mime/"' +
        ' xmlns:tns="http://tempuri.org/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"' +
        ' xmlns:tm="http://microsoft.com/wsdl/mime/textMatching/" xmlns:soapenc="http://schemas.xmlsoap.org/soap/encoding/"' +
        ' targetNamespace="http://tempuri.org/" xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/">',
    );
  });

  it('has one inline qualified schema in the service namespace', () => {
    expect(kids(types, XSD_NS, 'schema')).toHaveLength(1);
    expect(attr(schema, 'elementFormDefault')).toBe('qualified');
    expect(attr(schema, 'targetNamespace')).toBe(NS);
  });

  it('declares wrapper elements Op and OpResponse with params in order and the ASMX minOccurs rules', () => {
    for (const op of operationList) {
      const req = sequenceOf(named(elements, op.name));
      expect(req.map((e) => attr(e, 'name'))).toEqual(op.params.map((p) => p.name));
      op.params.forEach((p, i) => {
        const e = req[i] as XNode;
        expect(attr(e, 'maxOccurs')).toBe('1');
        if (isArrayParam(p)) {
          expect(attr(e, 'minOccurs')).toBe('0');
          expect(attr(e, 'type')).toBe(`tns:${p.type.name}`);
        } else {
          expect(attr(e, 'type')).toBe(`s:${p.type}`);
          expect(attr(e, 'minOccurs')).toBe(p.type === 'string' ? '0' : '1');
        }
      });
      const res = sequenceOf(named(elements, `${op.name}Response`));
      expect(res).toHaveLength(1);
      const result = res[0] as XNode;
      expect(attr(result, 'name')).toBe(`${op.name}Result`);
      expect(attr(result, 'maxOccurs')).toBe('1');
      if (op.result.kind === 'scalar') {
        expect(attr(result, 'minOccurs')).toBe('1');
        expect(attr(result, 'type')).toBe(`s:${op.result.type}`);
      } else {
        expect(attr(result, 'minOccurs')).toBe('0');
        expect(attr(result, 'type')).toBe(`tns:${op.result.type.name}`);
      }
    }
  });

  it('writes an empty complexType for operations without parameters', () => {
    for (const op of operationList.filter((o) => o.params.length === 0)) {
      expect(wsdl).toContain(`<s:element name="${op.name}">\r\n        <s:complexType />\r\n      </s:element>`);
    }
  });

  it('spot-checks exact particles', () => {
    expect(wsdl).toContain('<s:element minOccurs="0" maxOccurs="1" name="SystemUser" type="s:string" />');
    expect(wsdl).toContain('<s:element minOccurs="1" maxOccurs="1" name="Latitud" type="s:double" />');
    expect(wsdl).toContain('<s:element minOccurs="1" maxOccurs="1" name="FechaHoraEvento" type="s:dateTime" />');
    expect(wsdl).toContain('<s:element minOccurs="1" maxOccurs="1" name="correcto" type="s:boolean" />');
    expect(wsdl).toContain('<s:element minOccurs="0" maxOccurs="1" name="Eventos" type="tns:ArrayOfPEvento" />');
    expect(wsdl).toContain('<s:element minOccurs="0" maxOccurs="1" name="Sensores" type="tns:ArrayOfPSensor" />');
  });

  it('declares the complex and array types with the names generated clients depend on', () => {
    const names = complexTypes.map((t) => attr(t, 'name'));
    expect(names.sort()).toEqual(
      ['ArrayOfInt', 'ArrayOfPEvento', 'ArrayOfPSensor', 'ArrayOfVehiculo', 'Comando', 'Vehiculo', 'pEvento', 'pSensor'].sort(),
    );
    const item = (arrayName: string): XNode => {
      const seq = sequenceOf(named(complexTypes, arrayName));
      expect(seq).toHaveLength(1);
      return seq[0] as XNode;
    };
    for (const [array, itemName] of [
      ['ArrayOfVehiculo', 'Vehiculo'],
      ['ArrayOfPEvento', 'pEvento'],
      ['ArrayOfPSensor', 'pSensor'],
    ] as const) {
      const it = item(array);
      expect(Object.fromEntries(it.attrs)).toEqual({
        minOccurs: '0',
        maxOccurs: 'unbounded',
        name: itemName,
        nillable: 'true',
        type: `tns:${itemName}`,
      });
    }
    // Value-type items are not nillable in ASMX.
    expect(Object.fromEntries(item('ArrayOfInt').attrs)).toEqual({
      minOccurs: '0',
      maxOccurs: 'unbounded',
      name: 'int',
      type: 's:int',
    });
    expect(wsdl).toContain('<s:element minOccurs="0" maxOccurs="unbounded" name="int" type="s:int" />');
  });

  it('declares Vehiculo dates as nillable dateTimes with minOccurs 1, and Comando fields', () => {
    const vehiculo = sequenceOf(named(complexTypes, 'Vehiculo'));
    expect(vehiculo.map((e) => attr(e, 'name'))).toEqual(['Dominio', 'NroSerie', 'FechaUltimoReporte', 'FechaRegistracion']);
    for (const name of ['FechaUltimoReporte', 'FechaRegistracion']) {
      expect(wsdl).toContain(`<s:element minOccurs="1" maxOccurs="1" name="${name}" nillable="true" type="s:dateTime" />`);
    }
    const comando = sequenceOf(named(complexTypes, 'Comando'));
    expect(comando.map((e) => [attr(e, 'name'), attr(e, 'minOccurs'), attr(e, 'type')])).toEqual([
      ['CMD', '0', 's:string'],
      ['UNIDAD', '0', 's:string'],
      ['EQUIPO', '0', 's:string'],
      ['NUMERO', '1', 's:int'],
    ]);
    // The deployed service's pEvento in its order; an element added since goes anywhere among them
    // and needs no edit here (the WSDL follows the catalogue, as for DEPLOYED_ORDER).
    const pEvento = sequenceOf(named(complexTypes, 'pEvento')).map((e) => attr(e, 'name'));
    const deployedPEvento = ['Dominio', 'NroSerie', 'Codigo', 'Latitud', 'Longitud', 'Altitud', 'Velocidad', 'FechaHoraEvento', 'FechaHoraRecepcion'];
    expect(pEvento.filter((n) => deployedPEvento.includes(n))).toEqual(deployedPEvento);
    expect(pEvento).toEqual(pEventoType.fields.map((f) => f.name));
  });

  it('declares each named type after its first use (ASMX order) and only once', () => {
    const order = schema.children.map((c) => `${c.local}:${attr(c, 'name')}`);
    expect(new Set(order).size).toBe(order.length);
    const at = (s: string): number => order.indexOf(s);
    expect(at('complexType:ArrayOfVehiculo')).toBe(at('element:ConsultarVehiculosEnViajeResponse') + 1);
    expect(at('complexType:Vehiculo')).toBe(at('complexType:ArrayOfVehiculo') + 1);
    expect(at('complexType:ArrayOfPEvento')).toBe(at('element:LoginYInsertarEventos') + 1);
    expect(at('complexType:pEvento')).toBe(at('complexType:ArrayOfPEvento') + 1);
    expect(at('element:LoginYInsertarEventosResponse')).toBe(at('complexType:pEvento') + 1);
  });

  it('declares top-level root elements only for the HTTP bindings result types, at the end', () => {
    const expected = [...new Set(httpOps.map((op) => op.result.name))];
    const wrappers = new Set(operationList.flatMap((op) => [op.name, `${op.name}Response`]));
    const roots = elements.filter((e) => !wrappers.has(attr(e, 'name')));
    expect(roots.map((e) => attr(e, 'name'))).toEqual(expected);
    expect(expected.sort()).toEqual(['ArrayOfVehiculo', 'Comando', 'boolean', 'int']);
    expect(schema.children.slice(-roots.length)).toEqual(roots);
    expect(wsdl).toContain('<s:element name="boolean" type="s:boolean" />');
    expect(wsdl).toContain('<s:element name="int" type="s:int" />');
    expect(wsdl).toContain('<s:element name="Comando" nillable="true" type="tns:Comando" />');
    expect(wsdl).toContain('<s:element name="ArrayOfVehiculo" nillable="true" type="tns:ArrayOfVehiculo" />');
    expect(wsdl).not.toContain('<s:element name="ArrayOfInt"');
  });

  it('declares SOAP messages for every operation and HTTP messages for the HTTP-bindable ones', () => {
    const expected: string[] = [];
    for (const op of operationList) expected.push(`${op.name}SoapIn`, `${op.name}SoapOut`);
    for (const verb of ['Get', 'Post']) for (const op of httpOps) expected.push(`${op.name}Http${verb}In`, `${op.name}Http${verb}Out`);
    expect(messages.map((m) => attr(m, 'name'))).toEqual(expected);

    for (const op of operationList) {
      const soapIn = kid(named(messages, `${op.name}SoapIn`), WSDL_NS, 'part');
      expect(Object.fromEntries(soapIn.attrs)).toEqual({ name: 'parameters', element: `tns:${op.name}` });
      const soapOut = kid(named(messages, `${op.name}SoapOut`), WSDL_NS, 'part');
      expect(Object.fromEntries(soapOut.attrs)).toEqual({ name: 'parameters', element: `tns:${op.name}Response` });
    }
    for (const verb of ['Get', 'Post']) {
      for (const op of httpOps) {
        const parts = kids(named(messages, `${op.name}Http${verb}In`), WSDL_NS, 'part');
        expect(parts.map((p) => Object.fromEntries(p.attrs))).toEqual(op.params.map((p) => ({ name: p.name, type: 's:string' })));
        const out = kid(named(messages, `${op.name}Http${verb}Out`), WSDL_NS, 'part');
        expect(Object.fromEntries(out.attrs)).toEqual({ name: 'Body', element: `tns:${op.result.name}` });
      }
    }
    expect(wsdl).toContain('<wsdl:message name="LogoutHttpGetIn" />');
  });

  it('has port types ServiceSoap (all ops) and ServiceHttpGet/ServiceHttpPost (HTTP-bindable ops) with documentation', () => {
    expect(portTypes.map((p) => attr(p, 'name'))).toEqual(['ServiceSoap', 'ServiceHttpGet', 'ServiceHttpPost']);
    const check = (portType: string, ops: readonly OperationDef[], suffix: string): void => {
      const pt = named(portTypes, portType);
      const pOps = kids(pt, WSDL_NS, 'operation');
      expect(pOps.map((o) => attr(o, 'name'))).toEqual(ops.map((o) => o.name));
      ops.forEach((op, i) => {
        const node = pOps[i] as XNode;
        const doc = kid(node, WSDL_NS, 'documentation');
        expect(doc.text).toBe(op.documentation);
        expect(attr(kid(node, WSDL_NS, 'input'), 'message')).toBe(`tns:${op.name}${suffix}In`);
        expect(attr(kid(node, WSDL_NS, 'output'), 'message')).toBe(`tns:${op.name}${suffix}Out`);
      });
    };
    check('ServiceSoap', operationList, 'Soap');
    check('ServiceHttpGet', httpOps, 'HttpGet');
    check('ServiceHttpPost', httpOps, 'HttpPost');
    expect(wsdl).toContain(`<wsdl:documentation xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/">${operationList[0]?.documentation}</wsdl:documentation>`);
  });

  it('binds every operation in ServiceSoap and ServiceSoap12 with soapAction namespace+Op, document/literal', () => {
    expect(bindings.map((b) => attr(b, 'name'))).toEqual(['ServiceSoap', 'ServiceSoap12', 'ServiceHttpGet', 'ServiceHttpPost']);
    for (const [name, soapNs] of [
      ['ServiceSoap', SOAP_NS],
      ['ServiceSoap12', SOAP12_NS],
    ] as const) {
      const b = named(bindings, name);
      expect(attr(b, 'type')).toBe('tns:ServiceSoap');
      const sb = kid(b, soapNs, 'binding');
      expect(Object.fromEntries(sb.attrs)).toEqual({ transport: 'http://schemas.xmlsoap.org/soap/http' });
      const bOps = kids(b, WSDL_NS, 'operation');
      expect(bOps.map((o) => attr(o, 'name'))).toEqual(opNames);
      for (const bo of bOps) {
        const so = kid(bo, soapNs, 'operation');
        expect(attr(so, 'soapAction')).toBe(NS + attr(bo, 'name'));
        expect(attr(so, 'style')).toBe('document');
        for (const io of ['input', 'output']) {
          expect(Object.fromEntries(kid(kid(bo, WSDL_NS, io), soapNs, 'body').attrs)).toEqual({ use: 'literal' });
        }
      }
    }
  });

  it('binds exactly the HTTP-bindable operations in ServiceHttpGet and ServiceHttpPost', () => {
    for (const [name, verb] of [
      ['ServiceHttpGet', 'GET'],
      ['ServiceHttpPost', 'POST'],
    ] as const) {
      const b = named(bindings, name);
      expect(attr(b, 'type')).toBe(`tns:${name}`);
      expect(attr(kid(b, HTTP_NS, 'binding'), 'verb')).toBe(verb);
      const bOps = kids(b, WSDL_NS, 'operation');
      expect(bOps.map((o) => attr(o, 'name'))).toEqual(httpOps.map((o) => o.name));
      for (const op of soapOnlyOps) expect(bOps.map((o) => attr(o, 'name'))).not.toContain(op.name);
      for (const bo of bOps) {
        expect(attr(kid(bo, HTTP_NS, 'operation'), 'location')).toBe(`/${attr(bo, 'name')}`);
        const input = kid(bo, WSDL_NS, 'input');
        if (verb === 'GET') kid(input, HTTP_NS, 'urlEncoded');
        else expect(attr(kid(input, MIME_NS, 'content'), 'type')).toBe('application/x-www-form-urlencoded');
        expect(attr(kid(kid(bo, WSDL_NS, 'output'), MIME_NS, 'mimeXml'), 'part')).toBe('Body');
      }
    }
  });

  it('has service Service with four ports at the given serviceUrl', () => {
    expect(attr(service, 'name')).toBe('Service');
    const ports = kids(service, WSDL_NS, 'port');
    expect(ports.map((p) => [attr(p, 'name'), attr(p, 'binding')])).toEqual([
      ['ServiceSoap', 'tns:ServiceSoap'],
      ['ServiceSoap12', 'tns:ServiceSoap12'],
      ['ServiceHttpGet', 'tns:ServiceHttpGet'],
      ['ServiceHttpPost', 'tns:ServiceHttpPost'],
    ]);
    const addressNs = [SOAP_NS, SOAP12_NS, HTTP_NS, HTTP_NS];
    ports.forEach((p, i) => {
      expect(attr(kid(p, addressNs[i] as string, 'address'), 'location')).toBe(URL);
    });
  });

  it('resolves every tns: reference to something the document defines', () => {
    const defined = new Set<string>();
    for (const e of elements) defined.add(`element:${attr(e, 'name')}`);
    for (const t of complexTypes) defined.add(`type:${attr(t, 'name')}`);
    for (const m of messages) defined.add(`message:${attr(m, 'name')}`);
    for (const p of portTypes) defined.add(`portType:${attr(p, 'name')}`);
    for (const b of bindings) defined.add(`binding:${attr(b, 'name')}`);
    const refs: string[] = [];
    const walk = (n: XNode): void => {
      for (const [name, value] of n.attrs) {
        let kind: string | undefined;
        if (name === 'element') kind = 'element';
        else if (name === 'type' && n.uri === XSD_NS) kind = 'type';
        else if (name === 'type' && n.local === 'binding' && n.uri === WSDL_NS) kind = 'portType';
        else if (name === 'message') kind = 'message';
        else if (name === 'binding' && n.local === 'port') kind = 'binding';
        if (kind === undefined) continue;
        const q = qname(n, value);
        if (q.uri === XSD_NS) continue;
        expect(q.uri).toBe(NS);
        refs.push(`${kind}:${q.local}`);
      }
      n.children.forEach(walk);
    };
    walk(defs);
    expect(refs.length).toBeGreaterThan(100);
    for (const r of refs) expect(defined.has(r), r).toBe(true);
  });

  it('takes the namespace from the options', () => {
    const other = 'urn:example:gps/v1/';
    const doc = renderWsdl({ namespace: other, serviceUrl: 'https://gw.example.com/hub/x/MAPI/SOAP/gps/service.asmx' });
    const d = parseXml(doc);
    expect(attr(d, 'targetNamespace')).toBe(other);
    expect(d.scope['tns']).toBe(other);
    expect(attr(kid(kid(d, WSDL_NS, 'types'), XSD_NS, 'schema'), 'targetNamespace')).toBe(other);
    const soap = named(kids(d, WSDL_NS, 'binding'), 'ServiceSoap12');
    for (const bo of kids(soap, WSDL_NS, 'operation')) {
      expect(attr(kid(bo, SOAP12_NS, 'operation'), 'soapAction')).toBe(other + attr(bo, 'name'));
    }
    expect(doc).not.toContain('tempuri');
    expect(doc).toContain('location="https://gw.example.com/hub/x/MAPI/SOAP/gps/service.asmx"');
  });

  it('escapes interpolated values', () => {
    const hostileNs = 'urn:a&b"<c>/';
    const hostileUrl = 'http://h/x.asmx?a=1&b="2"<script>';
    const doc = renderWsdl({ namespace: hostileNs, serviceUrl: hostileUrl });
    const d = parseXml(doc);
    expect(attr(d, 'targetNamespace')).toBe(hostileNs);
    const port = kids(kid(d, WSDL_NS, 'service'), WSDL_NS, 'port')[0] as XNode;
    expect(attr(kid(port, SOAP_NS, 'address'), 'location')).toBe(hostileUrl);
    expect(doc).not.toContain('<script>');
  });

  it('lists operations in the deployed service declaration order in every section', () => {
    expect(opNames.filter((n) => DEPLOYED_ORDER.includes(n))).toEqual(DEPLOYED_ORDER);
    const DECLARATION_ORDER = opNames;
    const httpOrder = httpOps.map((o) => o.name);
    const wrappers = elements.map((e) => attr(e, 'name')).filter((n) => DECLARATION_ORDER.includes(n));
    expect(wrappers).toEqual(DECLARATION_ORDER);
    expect(messages.filter((m) => attr(m, 'name').endsWith('SoapIn')).map((m) => attr(m, 'name'))).toEqual(DECLARATION_ORDER.map((n) => `${n}SoapIn`));
    for (const pt of portTypes) {
      const names = kids(pt, WSDL_NS, 'operation').map((o) => attr(o, 'name'));
      expect(names).toEqual(attr(pt, 'name') === 'ServiceSoap' ? DECLARATION_ORDER : httpOrder);
    }
    for (const b of bindings) {
      const names = kids(b, WSDL_NS, 'operation').map((o) => attr(o, 'name'));
      expect(names).toEqual(attr(b, 'name').startsWith('ServiceSoap') ? DECLARATION_ORDER : httpOrder);
    }
    // The HTTP root elements follow in order of first use in that order.
    const roots = elements.map((e) => attr(e, 'name')).filter((n) => ['boolean', 'int', 'Comando', 'ArrayOfVehiculo'].includes(n));
    expect(roots).toEqual(['boolean', 'int', 'Comando', 'ArrayOfVehiculo']);
  });

  it('is deterministic', () => {
    expect(renderWsdl(opts)).toBe(wsdl);
  });
});

describe('renderWsdl with the real node-soap client', () => {
  let dir = '';
  let file = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'wsdl-'));
    file = join(dir, 'service.wsdl');
    await writeFile(file, renderWsdl(opts), 'utf8');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads the WSDL and describes both SOAP ports with every operation', async () => {
    const soap = await import('soap');
    const client = await soap.createClientAsync(file);
    const description: unknown = client.describe();
    const services = description as Record<string, Record<string, Record<string, { input: Record<string, unknown>; output: Record<string, unknown> }>>>;
    const service = services['Service'];
    expect(service).toBeDefined();
    const ports = service ?? {};
    expect(Object.keys(ports)).toEqual(expect.arrayContaining(['ServiceSoap', 'ServiceSoap12']));
    for (const port of ['ServiceSoap', 'ServiceSoap12']) {
      expect(Object.keys(ports[port] ?? {}).sort()).toEqual([...opNames].sort());
    }
    const eventos = ports['ServiceSoap']?.['LoginYInsertarEventos'];
    expect(Object.keys(eventos?.input ?? {})).toEqual(['SystemUser', 'Password', 'Eventos']);
    expect(JSON.stringify(eventos?.input['Eventos'])).toContain('pEvento[]');
    const login = ports['ServiceSoap12']?.['LoginYInsertarEvento'];
    expect(Object.keys(login?.input ?? {})).toEqual(operationList.find((o) => o.name === 'LoginYInsertarEvento')?.params.map((p) => p.name));
  });

  it('drives a real SOAP call: request element, SOAPAction and response parsing', async () => {
    const soap = await import('soap');
    const sent: { url: string; body: string; headers: Record<string, unknown> }[] = [];
    const responseXml =
      '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"' +
      ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema"><soap:Body>' +
      '<LoginYInsertarEventosResponse xmlns="http://tempuri.org/"><LoginYInsertarEventosResult><int>17</int><int>-3</int>' +
      '</LoginYInsertarEventosResult></LoginYInsertarEventosResponse></soap:Body></soap:Envelope>';
    const httpClient = {
      request(url: string, body: string, callback: (err: unknown, res?: unknown, body?: unknown) => void, headers?: Record<string, unknown>) {
        sent.push({ url, body, headers: headers ?? {} });
        const res = { status: 200, statusCode: 200, headers: { 'content-type': 'text/xml; charset=utf-8' }, data: responseXml };
        setImmediate(() => callback(null, res, responseXml));
        return Promise.resolve(res);
      },
    };
    const client = await soap.createClientAsync(file, { httpClient: httpClient as unknown as import('soap').IHttpClient });
    const call = client['LoginYInsertarEventosAsync'] as (args: unknown) => Promise<[unknown, ...unknown[]]>;
    const ev = {
      Dominio: 'AB123CD', NroSerie: 'S1', Codigo: '1', Latitud: -34.6, Longitud: -58.4, Altitud: 0, Velocidad: 10,
      FechaHoraEvento: '2026-01-02T03:04:05Z', FechaHoraRecepcion: '2026-01-02T03:04:06Z',
    };
    const [result] = await call.call(client, { SystemUser: 'u', Password: 'p', Eventos: { pEvento: [ev, ev] } });
    expect(sent).toHaveLength(1);
    const req = sent[0];
    expect(req?.url).toBe(URL);
    expect(String(req?.headers['SOAPAction'])).toBe('"http://tempuri.org/LoginYInsertarEventos"');
    const env = parseXml(req?.body ?? '');
    const body = env.children.find((c) => c.local === 'Body');
    const opEl = body?.children[0];
    expect(opEl?.local).toBe('LoginYInsertarEventos');
    expect(opEl?.uri).toBe(NS);
    expect(opEl?.children.map((c) => `${c.uri}|${c.local}`)).toEqual([`${NS}|SystemUser`, `${NS}|Password`, `${NS}|Eventos`]);
    const eventos = opEl?.children[2];
    expect(eventos?.children.map((c) => c.local)).toEqual(['pEvento', 'pEvento']);
    expect(result).toEqual({ LoginYInsertarEventosResult: { int: [17, -3] } });
  });
});

describe('renderDisco', () => {
  it('is exactly the ASMX discovery document', () => {
    expect(renderDisco(opts)).toBe(
      '<?xml version="1.0" encoding="utf-8"?>\r\n' +
        '<discovery xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns="http://schemas.xmlsoap.org/disco/">\r\n' +
        '  <contractRef ref="http://localhost:8080/service.asmx?wsdl" docRef="http://localhost:8080/service.asmx" xmlns="http://schemas.xmlsoap.org/disco/scl/" />\r\n' +
        '  <soap address="http://localhost:8080/service.asmx" xmlns:q1="http://tempuri.org/" binding="q1:ServiceSoap" xmlns="http://schemas.xmlsoap.org/disco/soap/" />\r\n' +
        '  <soap address="http://localhost:8080/service.asmx" xmlns:q2="http://tempuri.org/" binding="q2:ServiceSoap12" xmlns="http://schemas.xmlsoap.org/disco/soap/" />\r\n' +
        '</discovery>',
    );
  });

  it('parses, points at the WSDL and names both SOAP bindings in the configured namespace', () => {
    const ns = 'urn:x&y/';
    const url = 'https://gw.example.com/a b/service.asmx';
    const d = parseXml(renderDisco({ namespace: ns, serviceUrl: url }));
    expect(d.uri).toBe('http://schemas.xmlsoap.org/disco/');
    expect(d.local).toBe('discovery');
    const ref = kid(d, 'http://schemas.xmlsoap.org/disco/scl/', 'contractRef');
    expect(attr(ref, 'ref')).toBe(`${url}?wsdl`);
    expect(attr(ref, 'docRef')).toBe(url);
    const soaps = kids(d, 'http://schemas.xmlsoap.org/disco/soap/', 'soap');
    expect(soaps.map((s) => attr(s, 'address'))).toEqual([url, url]);
    expect(soaps.map((s) => qname(s, attr(s, 'binding')))).toEqual([
      { uri: ns, local: 'ServiceSoap' },
      { uri: ns, local: 'ServiceSoap12' },
    ]);
  });
});

describe('help pages', () => {
  const home = renderHelpPage(opts);

  function forms(html: string): { action: string; inputs: string[]; masked: string[]; labels: string[] }[] {
    const out: { action: string; inputs: string[]; masked: string[]; labels: string[] }[] = [];
    for (const m of html.matchAll(/<form method="POST" action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)) {
      const inner = m[2] ?? '';
      out.push({
        action: m[1] ?? '',
        inputs: [...inner.matchAll(/<input [^>]*type="(?:text|password)"[^>]*name="([^"]*)"/g)].map((x) => x[1] ?? ''),
        masked: [...inner.matchAll(/<input [^>]*type="password"[^>]*name="([^"]*)"/g)].map((x) => x[1] ?? ''),
        labels: [...inner.matchAll(/<label for="[^"]*">([^<]*)<\/label>/g)].map((x) => x[1] ?? ''),
      });
    }
    return out;
  }

  it('lists the operations sorted by name, as ASMX does, not in declaration order', () => {
    const listed = [...home.matchAll(/<li><a href="[^"]*\?op=([^"]+)">/g)].map((m) => m[1]);
    expect(listed).toEqual([...opNames].sort());
    expect(listed[0]).toBe('CambiarClave');
  });

  it('lists every operation with its documentation and links to the WSDL', () => {
    expect(home).toMatch(/^<!DOCTYPE html>/);
    expect(home).toContain('<title>Service Web Service</title>');
    expect(home).toContain(`href="${URL}?wsdl"`);
    for (const op of operationList) {
      expect(home).toContain(`<a href="${URL}?op=${op.name}">${op.name}</a>`);
      expect(home).toContain(escapeHtml(op.documentation));
    }
    expect(forms(home)).toHaveLength(0);
  });

  it('is self-contained: no scripts, no external resources', () => {
    const pages = [home, ...operationList.map((op) => renderOperationPage({ ...opts, operation: op.name }) ?? '')];
    for (const html of pages) {
      expect(html).not.toMatch(/<script|<link|<img|<iframe|@import|src=/i);
      expect(html).toContain('<style>');
    }
  });

  it('has one test form per HTTP-bindable operation, posting to serviceUrl/Op with one labelled input per parameter, passwords masked', () => {
    for (const op of httpOps) {
      const html = renderOperationPage({ ...opts, operation: op.name });
      expect(html).not.toBeNull();
      const f = forms(html ?? '');
      expect(f).toHaveLength(1);
      expect(f[0]?.action).toBe(`${URL}/${op.name}`);
      expect(f[0]?.inputs).toEqual(op.params.map((p) => p.name));
      expect(f[0]?.labels).toEqual(op.params.map((p) => p.name));
      // The catalogue's secrets (passwords) are masked fields; nothing else is.
      expect(f[0]?.masked).toEqual(op.params.filter((p) => 'secret' in p && p.secret === true).map((p) => p.name));
      expect(html).toContain('value="Invoke"');
      expect(html).toContain(escapeHtml(op.documentation));
    }
  });

  it('has no test form for SOAP-only operations and says so', () => {
    for (const op of soapOnlyOps) {
      const html = renderOperationPage({ ...opts, operation: op.name }) ?? '';
      expect(forms(html)).toHaveLength(0);
      expect(html).toMatch(/only available through the SOAP/);
      expect(html).not.toContain('HTTP GET request');
    }
  });

  it('shows SOAP 1.1, SOAP 1.2, HTTP GET and HTTP POST samples generated from the catalogue', () => {
    const html = renderOperationPage({ ...opts, operation: 'LoginYInsertarEvento' }) ?? '';
    expect(html).toContain('POST /service.asmx HTTP/1.1');
    expect(html).toContain('Host: localhost:8080');
    expect(html).toContain('SOAPAction: &quot;http://tempuri.org/LoginYInsertarEvento&quot;');
    expect(html).toContain('&lt;soap:Envelope');
    expect(html).toContain('&lt;soap12:Envelope');
    expect(html).toContain('&lt;LoginYInsertarEvento xmlns=&quot;http://tempuri.org/&quot;&gt;');
    expect(html).toContain('&lt;Latitud&gt;double&lt;/Latitud&gt;');
    expect(html).toContain('&lt;FechaHoraEvento&gt;dateTime&lt;/FechaHoraEvento&gt;');
    expect(html).toContain('&lt;LoginYInsertarEventoResult&gt;int&lt;/LoginYInsertarEventoResult&gt;');
    expect(html).toContain('GET /service.asmx/LoginYInsertarEvento?SystemUser=string&amp;Password=string&amp;Dominio=string');
    expect(html).toContain('POST /service.asmx/LoginYInsertarEvento HTTP/1.1');
    expect(html).toContain('&lt;int xmlns=&quot;http://tempuri.org/&quot;&gt;int&lt;/int&gt;');

    const arr = renderOperationPage({ ...opts, operation: 'LoginYInsertarEventos' }) ?? '';
    expect(arr.match(/&lt;pEvento&gt;/g)).toHaveLength(2 * 2); // two items, SOAP 1.1 and 1.2
    expect(arr).toContain('&lt;int&gt;int&lt;/int&gt;');

    const veh = renderOperationPage({ ...opts, operation: 'ConsultarVehiculosEnViaje' }) ?? '';
    expect(veh).toContain('&lt;ArrayOfVehiculo xmlns=&quot;http://tempuri.org/&quot;&gt;');
    expect(veh).toContain('&lt;FechaUltimoReporte&gt;dateTime&lt;/FechaUltimoReporte&gt;');

    const none = renderOperationPage({ ...opts, operation: 'Logout' }) ?? '';
    expect(none).toContain('&lt;Logout xmlns=&quot;http://tempuri.org/&quot; /&gt;');
    expect(none).toContain('GET /service.asmx/Logout HTTP/1.1');
  });

  it('returns null for unknown operations (exact, case-sensitive match)', () => {
    expect(renderOperationPage({ ...opts, operation: 'Nope' })).toBeNull();
    expect(renderOperationPage({ ...opts, operation: 'login' })).toBeNull();
    expect(renderOperationPage({ ...opts, operation: '' })).toBeNull();
  });

  it('escapes a hostile serviceUrl and namespace', () => {
    const evilUrl = 'http://evil.example/"><script>alert(1)</script><x a=\'';
    const evilNs = 'urn:"><img src=x onerror=alert(1)>/';
    const pages = [
      renderHelpPage({ namespace: evilNs, serviceUrl: evilUrl }),
      ...operationList.map((op) => renderOperationPage({ namespace: evilNs, serviceUrl: evilUrl, operation: op.name }) ?? ''),
    ];
    for (const html of pages) {
      expect(html).not.toContain('<script');
      expect(html).not.toContain('<img');
      expect(html).not.toContain('"><script');
      expect(html).not.toContain("a='");
    }
    const login = renderOperationPage({ namespace: evilNs, serviceUrl: evilUrl, operation: 'Login' }) ?? '';
    expect(login).toContain(`action="${escapeHtml(`${evilUrl}/Login`)}"`);
  });
});

describe('xml-escape', () => {
  it('escapes text and attributes like XmlTextWriter', () => {
    expect(escapeXmlText('a & b < c > d "e" \'f\'')).toBe('a &amp; b &lt; c &gt; d "e" \'f\'');
    expect(escapeXmlAttr('a & b < c > d "e" \'f\'\t\n\r')).toBe('a &amp; b &lt; c &gt; d &quot;e&quot; \'f\'&#x9;&#xA;&#xD;');
    expect(escapeHtml('<a href="x">\'&</a>')).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&lt;/a&gt;');
  });

  it('returns the same string when nothing needs escaping', () => {
    const s = 'plain text ñ 日本 😀';
    expect(escapeXmlText(s)).toBe(s);
    expect(escapeXmlAttr(s)).toBe(s);
    expect(escapeHtml(s)).toBe(s);
  });

  it('strips characters XML cannot represent', () => {
    expect(stripInvalidXmlChars('a\u0000b\u0001c\td\ne\rf\uFFFEg\uD800h😀')).toBe('abc\td\ne\rfgh😀');
    expect(stripInvalidXmlChars('ok')).toBe('ok');
  });
});
