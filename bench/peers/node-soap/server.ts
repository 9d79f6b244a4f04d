/**
 * The peer: what a straightforward Node.js SOAP implementation of the same contract does. node-soap
 * (`soap.listen` on a node:http server) serves OUR WSDL (rendered from the catalogue by
 * `renderWsdl`, exactly what the gateway serves at `?wsdl`) with an in-memory handler for
 * LoginYInsertarEvento: plain credential compare, an incrementing id, nothing stored durably.
 *
 * Run by bench/compare.ts (npm run bench) in its own process: listens on 127.0.0.1 (PORT, default 0 = any free
 * port), expects the provider's credentials in PEER_USER / PEER_PASSWORD and prints one JSON line
 * `{"url": ...}` on stdout once the WSDL is loaded. Exits on SIGTERM/SIGINT.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { listen, type IServices } from 'soap';
import { renderWsdl } from '../../../gateway/metadata/wsdl.js';

const HOST = '127.0.0.1';
const PORT = Number(process.env.PORT ?? 0);
const USER = process.env.PEER_USER ?? 'bench';
const PASSWORD = process.env.PEER_PASSWORD ?? 'bench-secret';
const NAMESPACE = 'http://tempuri.org/';
const PATH = '/service.asmx';

interface InsertArgs {
  SystemUser?: unknown;
  Password?: unknown;
}

let nextId = 0;
let calls = 0;

const port = {
  LoginYInsertarEvento(args: InsertArgs): { LoginYInsertarEventoResult: number } {
    calls++;
    if (args.SystemUser !== USER || args.Password !== PASSWORD) return { LoginYInsertarEventoResult: -1 };
    nextId = (nextId % 2147483647) + 1;
    return { LoginYInsertarEventoResult: nextId };
  },
};
// Both SOAP ports of the WSDL's `Service` (1.1 and 1.2) answer with the same implementation.
const services: IServices = { Service: { ServiceSoap: port, ServiceSoap12: port } };

// node-soap takes over the 'request' event and hands on only requests outside PATH: 404 them.
const server = http.createServer((_req, res) => {
  res.statusCode = 404;
  res.end();
});
server.keepAliveTimeout = 60_000;

server.listen(PORT, HOST, () => {
  const bound = (server.address() as AddressInfo).port;
  const serviceUrl = `http://${HOST}:${bound}${PATH}`;
  const wsdl = renderWsdl({ namespace: NAMESPACE, serviceUrl });
  listen(server, PATH, services, wsdl, (err: unknown) => {
    if (err) {
      console.error('peer: node-soap could not load the WSDL', err);
      process.exit(1);
    }
    console.log(JSON.stringify({ url: serviceUrl, wsdlBytes: wsdl.length }));
  });
});

const stop = (): void => {
  console.error(`peer: answered ${calls} calls`);
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
