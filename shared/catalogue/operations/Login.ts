import { refusals } from '../refusals.js';
import { defineOperation } from '../types.js';
import { CREDENTIALS, results } from '../complex-types.js';

export const Login = defineOperation({
  name: 'Login',
  documentation: 'Authenticates a provider; required before the operations that do not carry credentials.',
  authentication: 'credentials',
  refusals: refusals.boolean,
  params: [...CREDENTIALS],
  result: results.boolean,
});
