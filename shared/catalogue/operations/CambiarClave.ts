import { refusals } from '../refusals.js';
import { defineOperation } from '../types.js';
import { MAX_LENGTH, results } from '../complex-types.js';

export const CambiarClave = defineOperation({
  name: 'CambiarClave',
  documentation: 'Changes the password of the logged-in provider; true when the password was actually changed.',
  authentication: 'session',
  refusals: refusals.boolean,
  params: [
    { name: 'AntiguaClave', type: 'string', maxLength: MAX_LENGTH.password, secret: true },
    { name: 'NuevaClave', type: 'string', maxLength: MAX_LENGTH.password, secret: true },
  ],
  result: results.boolean,
});
