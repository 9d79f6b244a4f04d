import { refusals } from '../refusals.js';
import { defineOperation } from '../types.js';
import { CREDENTIALS, MAX_LENGTH, results } from '../complex-types.js';

export const LoginYCambiarClave = defineOperation({
  name: 'LoginYCambiarClave',
  documentation: 'Authenticates and changes the password; true when the password was actually changed.',
  authentication: 'credentials',
  refusals: refusals.boolean,
  params: [
    ...CREDENTIALS,
    { name: 'NuevaClave', type: 'string', maxLength: MAX_LENGTH.password, secret: true },
  ],
  result: results.boolean,
});
