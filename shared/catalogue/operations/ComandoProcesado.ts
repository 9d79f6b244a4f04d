import { refusals } from '../refusals.js';
import { defineOperation } from '../types.js';
import { results } from '../complex-types.js';

export const ComandoProcesado = defineOperation({
  name: 'ComandoProcesado',
  documentation: 'Reports that command NUMERO has been processed; correcto gives the outcome.',
  authentication: 'session',
  refusals: refusals.boolean,
  params: [
    { name: 'NUMERO', type: 'int' },
    { name: 'correcto', type: 'boolean' },
  ],
  result: results.boolean,
});
