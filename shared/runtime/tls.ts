import { readFileSync } from 'node:fs';
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import https from 'node:https';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { ConfigurationMissing, type Config } from '../config/index.js';
import { errorMessage } from '../util/error-message.js';

/**
 * The server side of TLS_CERT_FILE / TLS_KEY_FILE: every HTTP listener of a process (the public
 * port in uWS, the admin API and the worker's probes in node:http) serves HTTPS with them, TLS 1.2
 * and 1.3 only. The files are read at start and again on reload (SIGHUP), never kept open.
 */
export interface ServerTls {
  readonly certFile: string;
  readonly keyFile: string;
}

/** The TLS of a configuration, or null for plain HTTP; half a configuration is refused. */
export function serverTlsFromConfig(config: Pick<Config, 'tls' | 'service'>): ServerTls | null {
  const { certFile, keyFile } = config.tls;
  if ((certFile === null) !== (keyFile === null)) {
    throw new ConfigurationMissing(`TLS_CERT_FILE and TLS_KEY_FILE go together; only ${certFile === null ? 'TLS_KEY_FILE' : 'TLS_CERT_FILE'} is set.`);
  }
  if (certFile === null || keyFile === null) {
    if (config.service.httpPort !== null) throw new ConfigurationMissing('HTTP_PORT is the plain listener beside TLS: set TLS_CERT_FILE and TLS_KEY_FILE, or serve plain HTTP on PORT alone.');
    return null;
  }
  if (config.service.httpPort !== null && config.service.httpPort === config.service.port) {
    throw new ConfigurationMissing(`HTTP_PORT and PORT must differ (both ${config.service.port}).`);
  }
  return { certFile, keyFile };
}

/** node:tls options of the files as they are now; a key that does not match its certificate fails here. */
export function nodeTlsOptions(tls: ServerTls): https.ServerOptions {
  const cert = readFileSync(tls.certFile);
  const key = readFileSync(tls.keyFile);
  const options: https.ServerOptions = { cert, key, minVersion: 'TLSv1.2' };
  // Checks the pair now, with a message naming the files rather than OpenSSL's alone.
  try {
    const certificate = new X509Certificate(cert);
    if (!certificate.checkPrivateKey(createPrivateKey(key))) throw new Error('the key does not match the certificate');
  } catch (err) {
    throw new Error(`TLS_CERT_FILE ${tls.certFile} / TLS_KEY_FILE ${tls.keyFile}: ${errorMessage(err)}`, { cause: err });
  }
  return options;
}

/** When the certificate (the first of the chain) stops being valid, in seconds since the epoch. */
export function certificateExpiry(tls: ServerTls): number {
  const certificate = new X509Certificate(readFileSync(tls.certFile));
  return Math.floor(new Date(certificate.validTo).getTime() / 1000);
}

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** node:http, or node:https with the process's certificate. */
export function createHttpServer(tls: ServerTls | null, handler: RequestHandler): Server | https.Server {
  return tls === null ? http.createServer(handler) : https.createServer(nodeTlsOptions(tls), handler);
}

/** Serves the files as they are now to new connections; open ones keep theirs. */
export function reloadHttpServer(server: Server | https.Server, tls: ServerTls): void {
  if (server instanceof https.Server) server.setSecureContext(nodeTlsOptions(tls));
}

/** `http` or `https`, for the URLs a server logs and writes. */
export const schemeOf = (tls: ServerTls | null): 'http' | 'https' => (tls === null ? 'http' : 'https');
