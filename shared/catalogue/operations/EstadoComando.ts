import { refusals } from '../refusals.js';
import { defineOperation } from '../types.js';
import { MAX_LENGTH, results } from '../complex-types.js';

export const EstadoComando = defineOperation({
  name: 'EstadoComando',
  documentation: 'Reports the status message of command NUMERO; true when it was inserted correctly.',
  authentication: 'session',
  refusals: refusals.boolean,
  params: [
    { name: 'NUMERO', type: 'int' },
    { name: 'MSG', type: 'string', maxLength: MAX_LENGTH.msg },
  ],
  result: results.boolean,
});
