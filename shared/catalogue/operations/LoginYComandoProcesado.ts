import { refusals } from '../refusals.js';
import { defineOperation } from '../types.js';
import { CREDENTIALS, results } from '../complex-types.js';

export const LoginYComandoProcesado = defineOperation({
  name: 'LoginYComandoProcesado',
  documentation: 'Authenticates and finishes a command.',
  authentication: 'credentials',
  refusals: refusals.boolean,
  params: [
    ...CREDENTIALS,
    { name: 'NUMERO', type: 'int' },
    { name: 'correcto', type: 'boolean' },
  ],
  result: results.boolean,
});
