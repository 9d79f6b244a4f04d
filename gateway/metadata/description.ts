import type { Config } from '../../shared/config/index.js';
import { loadCapturedWsdl } from './captured-wsdl.js';
import { renderDisco } from './disco.js';
import { renderWsdl } from './wsdl.js';

/** What `?wsdl` and `?disco` answer, for one service URL (the request's, or PUBLIC_URL's). */
export interface ServiceDescription {
  wsdl(serviceUrl: string): string;
  disco(serviceUrl: string): string;
  /** With WSDL_FILE, what the gateway serves that the file does not declare (said once at start); else empty. */
  readonly beyond: readonly string[];
}

/**
 * The generated description by default; with WSDL_FILE the deployment's captured WSDL, checked
 * against the generated one here, so a file declaring what the gateway does not serve stops the
 * start before anything is opened.
 */
export function serviceDescription(service: Pick<Config['service'], 'namespace' | 'wsdlFile'>): ServiceDescription {
  const namespace = service.namespace;
  if (service.wsdlFile === null) {
    return {
      wsdl: (serviceUrl) => renderWsdl({ namespace, serviceUrl }),
      disco: (serviceUrl) => renderDisco({ namespace, serviceUrl }),
      beyond: [],
    };
  }
  const captured = loadCapturedWsdl(service.wsdlFile, namespace);
  return {
    wsdl: (serviceUrl) => captured.render(serviceUrl),
    disco: (serviceUrl) => renderDisco({ namespace, serviceUrl, soapBindings: captured.soapBindings }),
    beyond: captured.beyond,
  };
}
