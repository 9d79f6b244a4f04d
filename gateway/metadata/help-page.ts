/**
 * The HTML help pages ASMX serves for humans: `GET {path}` lists the operations; `GET {path}?op=Name`
 * shows one operation with a test form (HTTP POST) and sample SOAP 1.1, SOAP 1.2, HTTP GET and
 * HTTP POST messages with type-name placeholders, all generated from the operation catalogue.
 *
 * Self-contained: inline CSS, no scripts, no external resources. Every interpolated value is
 * HTML-escaped.
 */
import {
  findOperation,
  httpBindable,
  isArrayParam,
  operationsByName,
  type ArrayType,
  type ComplexType,
  type OperationDef,
  type Param,
  type ScalarType,
} from '../../shared/catalogue/index.js';
import { escapeHtml, escapeXmlAttr } from './xml-escape.js';
import { SERVICE_NAME, XML_DECLARATION, httpRootElement, soapActionFor, type MetadataOptions } from './wsdl.js';

interface OperationPageOptions extends MetadataOptions {
  /** Operation name as given in `?op=`; matched exactly (case-sensitive), as ASMX does. */
  readonly operation: string;
}

const TITLE = `${SERVICE_NAME} Web Service`;

const STYLE = `
body { margin: 0; color: #000; background: #fff; font-family: Verdana, Tahoma, Arial, sans-serif; font-size: 0.8em; }
#content { margin: 0 0 1em 2em; max-width: 60em; }
.heading1 { margin: 0 0 1em -2em; padding: 0.4em 0 0.4em 1.25em; color: #fff; background: #003366; font-family: Tahoma, Verdana, sans-serif; font-size: 2em; font-weight: normal; }
h2 { font-size: 1.5em; margin: 1.5em 0 0.5em; color: #003366; }
h3 { font-size: 1.1em; margin: 1.5em 0 0.5em; color: #003366; }
a:link, a:visited { color: #336699; }
a:hover { color: #3366cc; }
ul.operations { padding-left: 1.5em; }
ul.operations li { margin: 0 0 0.8em; }
.doc { display: block; margin-top: 0.2em; color: #333; }
pre, .frmInput { font-family: Consolas, "Courier New", monospace; font-size: 1em; }
pre { padding: 0.8em 1em; background: #e5e5cc; border: 1px solid #d0d0b0; overflow-x: auto; white-space: pre; }
table.test { border-collapse: collapse; }
table.test td { padding: 0.3em 1em 0.3em 0; vertical-align: middle; }
table.test th { text-align: left; padding: 0.3em 1em 0.3em 0; }
.frmInput { width: 22em; padding: 0.15em; }
.button { margin-top: 0.5em; padding: 0.2em 1.2em; }
.type { color: #666; }
.note { color: #333; }
`;

function page(title: string, body: string): string {
  return (
    '<!DOCTYPE html>\n' +
    '<html lang="en">\n' +
    '<head>\n' +
    '<meta charset="utf-8">\n' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n' +
    `<title>${escapeHtml(title)}</title>\n` +
    `<style>${STYLE}</style>\n` +
    '</head>\n' +
    '<body>\n' +
    '<div id="content">\n' +
    `<p class="heading1">${escapeHtml(SERVICE_NAME)}</p>\n` +
    body +
    '</div>\n' +
    '</body>\n' +
    '</html>\n'
  );
}

function operationHref(serviceUrl: string, name: string): string {
  return `${serviceUrl}?op=${encodeURIComponent(name)}`;
}

/** `GET {path}`: the list of operations with their documentation. */
export function renderHelpPage(opts: MetadataOptions): string {
  const url = opts.serviceUrl;
  const items = operationsByName
    .map((op) => {
      const doc = op.documentation === '' ? '' : `<span class="doc">${escapeHtml(op.documentation)}</span>`;
      return `<li><a href="${escapeHtml(operationHref(url, op.name))}">${escapeHtml(op.name)}</a>${doc}</li>\n`;
    })
    .join('');
  const body =
    '<p>The following operations are supported. For a formal definition, please review the ' +
    `<a href="${escapeHtml(`${url}?wsdl`)}">Service Description</a>.</p>\n` +
    `<ul class="operations">\n${items}</ul>\n`;
  return page(TITLE, body);
}

// ---------------------------------------------------------------------------------------------
// Sample messages

/** Sample lines use LF; they are shown in `<pre>`, where the line terminator does not matter. */
const NL = '\n';

function indent(depth: number): string {
  return '  '.repeat(depth);
}

/** Placeholder text for a scalar, as ASMX shows it: the XML Schema type name. */
function placeholder(type: ScalarType): string {
  return type;
}

/** Lines of `<name>` holding a sample of a named type (class fields or two array items). */
function complexLines(name: string, type: ComplexType | ArrayType, depth: number): string[] {
  const lines = [`${indent(depth)}<${name}>`];
  lines.push(...contentLines(type, depth + 1));
  lines.push(`${indent(depth)}</${name}>`);
  return lines;
}

function contentLines(type: ComplexType | ArrayType, depth: number): string[] {
  if (type.kind === 'complex') {
    return type.fields.map((f) => `${indent(depth)}<${f.name}>${placeholder(f.type)}</${f.name}>`);
  }
  const item = type.item;
  const lines: string[] = [];
  for (let i = 0; i < 2; i++) {
    if (typeof item === 'string') lines.push(`${indent(depth)}<${item}>${placeholder(item)}</${item}>`);
    else lines.push(...complexLines(item.name, item, depth));
  }
  return lines;
}

function paramLines(p: Param, depth: number): string[] {
  if (isArrayParam(p)) return complexLines(p.name, p.type, depth);
  return [`${indent(depth)}<${p.name}>${placeholder(p.type)}</${p.name}>`];
}

function wrapperLines(name: string, ns: string, children: string[], depth: number): string[] {
  const open = `${indent(depth)}<${name} xmlns="${escapeXmlAttr(ns)}"`;
  if (children.length === 0) return [`${open} />`];
  return [`${open}>`, ...children, `${indent(depth)}</${name}>`];
}

function requestElementLines(op: OperationDef, ns: string, depth: number): string[] {
  return wrapperLines(op.name, ns, op.params.flatMap((p) => paramLines(p, depth + 1)), depth);
}

function responseElementLines(op: OperationDef, ns: string, depth: number): string[] {
  const resultName = `${op.name}Result`;
  const r = op.result;
  const result =
    r.kind === 'scalar'
      ? [`${indent(depth + 1)}<${resultName}>${placeholder(r.type)}</${resultName}>`]
      : complexLines(resultName, r.type, depth + 1);
  return wrapperLines(`${op.name}Response`, ns, result, depth);
}

type SoapVersion = '1.1' | '1.2';

function envelope(version: SoapVersion, bodyLines: string[]): string {
  const [prefix, envNs] =
    version === '1.1'
      ? ['soap', 'http://schemas.xmlsoap.org/soap/envelope/']
      : ['soap12', 'http://www.w3.org/2003/05/soap-envelope'];
  return [
    XML_DECLARATION,
    `<${prefix}:Envelope xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:${prefix}="${envNs}">`,
    `  <${prefix}:Body>`,
    ...bodyLines,
    `  </${prefix}:Body>`,
    `</${prefix}:Envelope>`,
  ].join(NL);
}

interface Endpoint {
  readonly host: string;
  readonly path: string;
}

function endpointOf(serviceUrl: string): Endpoint {
  try {
    const u = new URL(serviceUrl);
    return { host: u.host, path: u.pathname };
  } catch {
    return { host: '', path: serviceUrl };
  }
}

function soapRequestSample(op: OperationDef, ns: string, ep: Endpoint, version: SoapVersion): string {
  const headers = [`POST ${ep.path} HTTP/1.1`, `Host: ${ep.host}`];
  if (version === '1.1') {
    headers.push('Content-Type: text/xml; charset=utf-8', 'Content-Length: length', `SOAPAction: "${soapActionFor(ns, op.name)}"`);
  } else {
    headers.push('Content-Type: application/soap+xml; charset=utf-8', 'Content-Length: length');
  }
  return headers.join(NL) + NL + NL + envelope(version, requestElementLines(op, ns, 2));
}

function soapResponseSample(op: OperationDef, ns: string, version: SoapVersion): string {
  const contentType = version === '1.1' ? 'text/xml; charset=utf-8' : 'application/soap+xml; charset=utf-8';
  return (
    ['HTTP/1.1 200 OK', `Content-Type: ${contentType}`, 'Content-Length: length'].join(NL) +
    NL +
    NL +
    envelope(version, responseElementLines(op, ns, 2))
  );
}

function formSample(op: OperationDef): string {
  return op.params.map((p) => `${encodeURIComponent(p.name)}=${isArrayParam(p) ? 'string' : placeholder(p.type)}`).join('&');
}

function httpRequestSample(op: OperationDef, ep: Endpoint, verb: 'GET' | 'POST'): string {
  const opPath = `${ep.path}/${op.name}`;
  if (verb === 'GET') {
    const query = formSample(op);
    return [`GET ${opPath}${query === '' ? '' : `?${query}`} HTTP/1.1`, `Host: ${ep.host}`].join(NL);
  }
  return (
    [`POST ${opPath} HTTP/1.1`, `Host: ${ep.host}`, 'Content-Type: application/x-www-form-urlencoded', 'Content-Length: length'].join(NL) +
    NL +
    NL +
    formSample(op)
  );
}

function httpResponseSample(op: OperationDef, ns: string): string {
  const root = httpRootElement(op.result);
  const r = op.result;
  const nsAttr = `xmlns="${escapeXmlAttr(ns)}"`;
  const body =
    r.kind === 'scalar'
      ? [`<${root.name} ${nsAttr}>${placeholder(r.type)}</${root.name}>`]
      : [`<${root.name} ${nsAttr}>`, ...contentLines(r.type, 1), `</${root.name}>`];
  return ['HTTP/1.1 200 OK', 'Content-Type: text/xml; charset=utf-8', 'Content-Length: length', '', XML_DECLARATION, ...body].join(NL);
}

function sampleSection(title: string, intro: string, request: string, response: string): string {
  return (
    `<h3>${escapeHtml(title)}</h3>\n` +
    `<p>${escapeHtml(intro)} The placeholders shown need to be replaced with actual values.</p>\n` +
    `<pre>${escapeHtml(request)}</pre>\n` +
    `<pre>${escapeHtml(response)}</pre>\n`
  );
}

// ---------------------------------------------------------------------------------------------
// Test form

function testSection(op: OperationDef, serviceUrl: string): string {
  if (!httpBindable(op)) {
    return (
      '<h3>Test</h3>\n' +
      '<p class="note">The test form is not available for this operation: it takes array parameters, so it is only ' +
      'available through the SOAP 1.1 and SOAP 1.2 bindings (see the samples below).</p>\n'
    );
  }
  const action = `${serviceUrl}/${op.name}`;
  const rows = op.params
    .map((p) => {
      const id = `param-${p.name}`;
      const type = isArrayParam(p) ? p.type.name : p.type;
      // A secret (a password) is typed into a masked field, so the page never shows it.
      const inputType = !isArrayParam(p) && p.secret === true ? 'password' : 'text';
      return (
        '<tr>' +
        `<td><label for="${escapeHtml(id)}">${escapeHtml(p.name)}</label></td>` +
        `<td><input class="frmInput" type="${inputType}" size="50" id="${escapeHtml(id)}" name="${escapeHtml(p.name)}"></td>` +
        `<td class="type">${escapeHtml(type)}</td>` +
        '</tr>\n'
      );
    })
    .join('');
  const table =
    rows === ''
      ? ''
      : '<table class="test">\n<tr><th>Parameter</th><th>Value</th><th>Type</th></tr>\n' + rows + '</table>\n';
  return (
    '<h3>Test</h3>\n' +
    '<p>To test the operation using the HTTP POST protocol, click the \'Invoke\' button.</p>\n' +
    `<form method="POST" action="${escapeHtml(action)}" target="_blank">\n` +
    table +
    '<input class="button" type="submit" value="Invoke">\n' +
    '</form>\n'
  );
}

/** `GET {path}?op=Name`: one operation, with test form and sample messages; null if unknown. */
export function renderOperationPage(opts: OperationPageOptions): string | null {
  const op = findOperation(opts.operation);
  if (op === undefined) return null;
  const ns = opts.namespace;
  const ep = endpointOf(opts.serviceUrl);
  const http = httpBindable(op);

  let body =
    `<p>Click <a href="${escapeHtml(opts.serviceUrl)}">here</a> for a complete list of operations.</p>\n` +
    `<h2>${escapeHtml(op.name)}</h2>\n` +
    (op.documentation === '' ? '' : `<p class="doc">${escapeHtml(op.documentation)}</p>\n`) +
    testSection(op, opts.serviceUrl) +
    sampleSection(
      'SOAP 1.1',
      'The following is a sample SOAP 1.1 request and response.',
      soapRequestSample(op, ns, ep, '1.1'),
      soapResponseSample(op, ns, '1.1'),
    ) +
    sampleSection(
      'SOAP 1.2',
      'The following is a sample SOAP 1.2 request and response.',
      soapRequestSample(op, ns, ep, '1.2'),
      soapResponseSample(op, ns, '1.2'),
    );
  if (http) {
    body +=
      sampleSection(
        'HTTP GET',
        'The following is a sample HTTP GET request and response.',
        httpRequestSample(op, ep, 'GET'),
        httpResponseSample(op, ns),
      ) +
      sampleSection(
        'HTTP POST',
        'The following is a sample HTTP POST request and response.',
        httpRequestSample(op, ep, 'POST'),
        httpResponseSample(op, ns),
      );
  }
  return page(TITLE, body);
}
