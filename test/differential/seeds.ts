/**
 * Hand-written bodies the mutator starts from besides generated ones (used when no corpus
 * directory is given): the bench fixture, the shapes real clients send, and the malformed and
 * hostile bodies of the robustness tests.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
const NS = 'http://tempuri.org/';
const login = '<SystemUser>acme</SystemUser><Password>secret-1</Password>';
const event =
  '<Dominio>AB123CD</Dominio><NroSerie>SN-1</NroSerie><Codigo>1</Codigo><Latitud>-34.6037221</Latitud><Longitud>-58.3815704</Longitud>' +
  '<Altitud>25</Altitud><Velocidad>42.5</Velocidad><FechaHoraEvento>2026-11-22T09:00:00-03:00</FechaHoraEvento><FechaHoraRecepcion>2026-11-22T09:00:02-03:00</FechaHoraRecepcion>';

const texts = [
  `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${SOAP11}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soap:Body><LoginYInsertarEvento xmlns="${NS}">${login}${event}</LoginYInsertarEvento></soap:Body></soap:Envelope>`,
  `<s:Envelope xmlns:s="${SOAP12}"><s:Body><Login xmlns="${NS}">${login}</Login></s:Body></s:Envelope>`,
  `<soapenv:Envelope xmlns:soapenv="${SOAP11}" xmlns:tns="${NS}"><soapenv:Header><tns:Trace>x</tns:Trace></soapenv:Header><soapenv:Body><tns:Login><tns:SystemUser>acme</tns:SystemUser><tns:Password>secret-1</tns:Password></tns:Login></soapenv:Body></soapenv:Envelope>`,
  `<a:Envelope xmlns:a='${SOAP11}' xmlns:b='${SOAP11}'>\n\t<b:Body>\n\t\t<Login xmlns='${NS}'>\n\t\t\t<Password>secret-1</Password>\n\t\t\t<SystemUser>acme</SystemUser>\n\t\t</Login>\n\t</b:Body>\n</a:Envelope>`,
  `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><LoginYInsertarEventos xmlns="${NS}">${login}<Eventos><pEvento>${event}</pEvento><pEvento>${event}</pEvento></Eventos></LoginYInsertarEventos></soap:Body></soap:Envelope>`,
  `<soap:Envelope xmlns:soap="${SOAP11}" xmlns:i="http://www.w3.org/2001/XMLSchema-instance"><soap:Body><LoginYInsertarEvento2 xmlns="${NS}">${login}<Sensores i:nil="true"/><Crudo><![CDATA[<raw> & ]]]]><![CDATA[>]]></Crudo></LoginYInsertarEvento2></soap:Body></soap:Envelope>`,
  `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><Login>`,
  'this is not xml',
  `<soap:Envelope><soap:Body/></soap:Envelope>`,
  `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body/></soap:Envelope><x/>`,
  `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><Login xmlns="${NS}"><SystemUser>&xxe;</SystemUser></Login></soap:Body></soap:Envelope>`,
  '',
  `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><Login xmlns="${NS}"><SystemUser>&lol2;</SystemUser></Login></soap:Body></soap:Envelope>`,
  `<!DOCTYPE x SYSTEM "http://127.0.0.1:1/evil.dtd"><x/>`,
  `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><Login></soap:Body></soap:Envelope>`,
  `<e:Envelope xmlns:e="urn:nope"><e:Body/></e:Envelope>`,
  `<?xml version="1.1"?><soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><Login xmlns="${NS}"><SystemUser>a\u0085b&#1;</SystemUser></Login></soap:Body></soap:Envelope>`,
  `<?xml version="1.0" encoding="utf-8"?>\r\n<!-- c --><?pi x?><soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><Login xmlns="${NS}"><SystemUser>a&#x20AC;&lt;&#128512;</SystemUser><Password xsi:nil="true" xmlns:xsi="x"/></Login></soap:Body></soap:Envelope>\n<!-- end -->`,
];

function fixture(): Uint8Array {
  return readFileSync(fileURLToPath(new URL('../../bench/fixtures/login-y-insertar-evento.soap11.xml', import.meta.url)));
}

export const SEEDS: readonly Uint8Array[] = [
  fixture(),
  ...texts.map((t) => Buffer.from(t, 'utf8')),
  Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(texts[1]!, 'utf8')]),
];
