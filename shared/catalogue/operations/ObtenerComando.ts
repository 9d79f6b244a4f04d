import { refusals } from '../refusals.js';
import { defineOperation } from '../types.js';
import { results } from '../complex-types.js';

export const ObtenerComando = defineOperation({
  name: 'ObtenerComando',
  documentation: 'Returns the first pending command; the provider is identified by the previous login.',
  authentication: 'session',
  refusals: refusals.faultWithSession,
  params: [],
  result: results.Comando,
});
