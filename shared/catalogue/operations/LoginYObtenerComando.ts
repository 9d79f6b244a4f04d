import { refusals } from '../refusals.js';
import { defineOperation } from '../types.js';
import { CREDENTIALS, results } from '../complex-types.js';

export const LoginYObtenerComando = defineOperation({
  name: 'LoginYObtenerComando',
  documentation: 'Authenticates and returns the first pending command.',
  authentication: 'credentials',
  refusals: refusals.faultWithCredentials,
  params: [...CREDENTIALS],
  result: results.Comando,
});
