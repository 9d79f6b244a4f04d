import { refusals } from '../refusals.js';
import { defineOperation } from '../types.js';
import { CREDENTIALS, MAX_LENGTH, results } from '../complex-types.js';

export const LoginYEstadoComando = defineOperation({
  name: 'LoginYEstadoComando',
  documentation: 'Authenticates and updates the status of a command that is in process.',
  authentication: 'credentials',
  refusals: refusals.boolean,
  params: [
    ...CREDENTIALS,
    { name: 'NUMERO', type: 'int' },
    { name: 'MSG', type: 'string', maxLength: MAX_LENGTH.msg },
  ],
  result: results.boolean,
});
