/**
 * WSDL_FILE's check: the captured file is the clients' contract, so the gateway must serve all it
 * declares (else the start is refused, naming each thing), and may serve more (listed for the
 * start's log). The files are edits of the shipped fixture, as deployments' files would differ.
 */
import { describe, expect, it } from 'vitest';
import { parseCapturedWsdl } from '../../../../gateway/metadata/captured-wsdl.js';
import { ConfigError } from '../../../../shared/config/index.js';
import {
  BEYOND_OLDER_RELEASE,
  CAPTURED,
  CAPTURED_NAMESPACE,
  CAPTURED_TEXT,
  olderRelease,
  SERVED_SINCE_CAPTURE,
  withoutOperation,
} from '../../../helpers/captured-wsdl.js';

const LABEL = 'WSDL_FILE /etc/gateway/service.wsdl';

function beyondOf(text: string): readonly string[] {
  return parseCapturedWsdl(Buffer.from(text, 'utf8'), CAPTURED_NAMESPACE, LABEL).beyond;
}

/** Why the file is refused: the one-line message, checked for its frame here. */
function refusalOf(text: string): string {
  try {
    parseCapturedWsdl(Buffer.from(text, 'utf8'), CAPTURED_NAMESPACE, LABEL);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message).not.toContain('\n');
    expect(message.startsWith(`${LABEL} declares what this gateway does not serve: `)).toBe(true);
    expect(message.endsWith(' (a captured WSDL may declare less than the gateway serves, never more).')).toBe(true);
    return message.slice(`${LABEL} declares what this gateway does not serve: `.length, -' (a captured WSDL may declare less than the gateway serves, never more).'.length);
  }
  throw new Error('the file was accepted');
}

/** `text` with `from` replaced by `to`, which must occur. */
function edit(text: string, from: string | RegExp, to: string): string {
  const out = text.replace(from, to);
  expect(out).not.toBe(text);
  return out;
}

describe('a captured WSDL declaring no more than the gateway serves', () => {
  it('the shipped fixture is accepted, with nothing beyond it but what the gateway gained since its capture (captured-service.beyond.txt)', () => {
    expect(parseCapturedWsdl(CAPTURED, CAPTURED_NAMESPACE, LABEL).beyond).toEqual(SERVED_SINCE_CAPTURE);
  });

  it("an older release's file (an operation and its types, an event field) is accepted, and what it lacks is listed", () => {
    expect(beyondOf(olderRelease())).toEqual(BEYOND_OLDER_RELEASE);
  });

  it('a file without the HTTP ports: the two HTTP bindings are beyond it, not each of their operations', () => {
    const soapOnly = edit(CAPTURED_TEXT, /\n {4}<wsdl:port name="WSPrestadoresHttp(?:Get|Post)"[^]*?<\/wsdl:port>/g, '');
    // (and what the gateway gained since the capture, but for its HTTP entries: those bindings are beyond as a whole)
    expect(beyondOf(soapOnly)).toEqual(['binding HTTP GET', 'binding HTTP POST', ...SERVED_SINCE_CAPTURE.filter((e) => !e.startsWith('binding HTTP'))].sort());
  });

  it('an operation missing from an HTTP binding only, and a string part missing there', () => {
    const text = edit(
      edit(CAPTURED_TEXT, /\n {4}<wsdl:operation name="Logout">\n {6}<wsdl:documentation[^\n]*\n {6}<wsdl:input message="gps:LogoutHttpGetIn" \/>[^]*?<\/wsdl:operation>/, ''),
      /(<wsdl:message name="InsertarEventoHttpPostIn">[^]*?)\n {4}<wsdl:part name="Crudo" type="xs:string" \/>/,
      '$1',
    );
    expect(beyondOf(text)).toEqual(['binding HTTP GET: operation Logout', 'binding HTTP POST: operation InsertarEvento: parameter Crudo', ...SERVED_SINCE_CAPTURE].sort());
  });
});

describe('a captured WSDL declaring what the gateway does not serve', () => {
  it('an operation: named once, not again for each binding', () => {
    expect(refusalOf(CAPTURED_TEXT.replaceAll('<wsdl:operation name="Logout">', '<wsdl:operation name="Reiniciar">'))).toBe('operation Reiniciar');
  });

  it('a parameter renamed: the name the gateway does not read, in the SOAP wrapper and each HTTP binding, and the int it requires there', () => {
    const renamed = edit(
      edit(CAPTURED_TEXT, /(<xs:element name="ComandoProcesado">[^]*?name=")NUMERO(")/, '$1Numero$2'),
      /(<wsdl:message name="ComandoProcesadoHttp(?:Get|Post)In">\n\s*<wsdl:part name=")NUMERO(")/g,
      '$1Numero$2',
    );
    expect(refusalOf(renamed)).toBe(
      'operation ComandoProcesado: parameter Numero; binding HTTP GET: operation ComandoProcesado: parameter Numero; binding HTTP POST: operation ComandoProcesado: parameter Numero; ' +
        'binding HTTP GET: operation ComandoProcesado: parameter NUMERO is missing, and the gateway requires it over HTTP GET and POST (it is not a string); ' +
        'binding HTTP POST: operation ComandoProcesado: parameter NUMERO is missing, and the gateway requires it over HTTP GET and POST (it is not a string)',
    );
  });

  it('a type member renamed, and one added', () => {
    const text = edit(
      edit(CAPTURED_TEXT, /(<xs:complexType name="Comando">[^]*?name=")EQUIPO(")/, '$1Equipo$2'),
      /(<xs:complexType name="pEvento">\n {8}<xs:sequence>)/,
      '$1\n          <xs:element minOccurs="0" maxOccurs="1" name="Inventado" type="xs:string" />',
    );
    // (a made-up name: no element the gateway may gain one day)
    expect(refusalOf(text)).toBe('type pEvento: element Inventado; type Comando: element Equipo');
  });

  it('a type that differs: a member and a parameter of another XML Schema type', () => {
    const text = edit(
      edit(CAPTURED_TEXT, /(<xs:complexType name="pEvento">[^]*?name="Latitud" type=")xs:double/, '$1xs:string'),
      /(<xs:element name="ComandoProcesado">[^]*?name="NUMERO" type=")xs:int/,
      '$1xs:long',
    );
    expect(refusalOf(text)).toBe(
      'operation ComandoProcesado: parameter NUMERO is xs:long in the file, xs:int in the gateway; type pEvento: element Latitud is xs:string in the file, xs:double in the gateway',
    );
  });

  it('a wrapper element the gateway does not route by', () => {
    const text = edit(CAPTURED_TEXT, '<wsdl:part name="parameters" element="gps:LogoutResponse" />', '<wsdl:part name="parameters" element="gps:LoginResponse" />');
    expect(refusalOf(text)).toBe(
      'operation Logout: output element is LoginResponse in the file, LogoutResponse in the gateway; operation Logout: result LoginResult',
    );
  });

  it('a binding: another HTTP verb', () => {
    expect(refusalOf(edit(CAPTURED_TEXT, '<http:binding verb="GET" />', '<http:binding verb="PUT" />'))).toBe('binding HTTP PUT');
  });

  it('an operation over a binding the gateway serves it on SOAP only', () => {
    const bound = edit(
      CAPTURED_TEXT,
      '<wsdl:portType name="WSPrestadoresHttpGet">',
      '<wsdl:portType name="WSPrestadoresHttpGet">\n    <wsdl:operation name="LoginYInsertarEventos">\n      <wsdl:input message="gps:LoginYInsertarEventosSoapIn" />\n      <wsdl:output message="gps:LoginYInsertarEventosSoapOut" />\n    </wsdl:operation>',
    );
    expect(refusalOf(bound)).toBe('binding HTTP GET: operation LoginYInsertarEventos');
  });

  it('an HTTP binding lacking a parameter that is not a string: the gateway requires it there, so its clients would fail', () => {
    const text = edit(CAPTURED_TEXT, /(<wsdl:message name="InsertarEventoHttpGetIn">[^]*?)\n {4}<wsdl:part name="Latitud" type="xs:string" \/>/, '$1');
    expect(refusalOf(text)).toBe(
      'binding HTTP GET: operation InsertarEvento: parameter Latitud is missing, and the gateway requires it over HTTP GET and POST (it is not a string)',
    );
  });

  it('no operation at all (no service element)', () => {
    expect(refusalOf(edit(CAPTURED_TEXT, /\n {2}<wsdl:service [^]*<\/wsdl:service>/, ''))).toBe(
      'it declares no operation (no wsdl:port whose binding and portType it defines)',
    );
  });

  it('a file lacking one operation and declaring another is refused for the one it declares, and only that', () => {
    const text = withoutOperation(CAPTURED_TEXT, 'ObtenerComando').replaceAll('<wsdl:operation name="Logout">', '<wsdl:operation name="Reiniciar">');
    expect(refusalOf(text)).toBe('operation Reiniciar');
  });
});
