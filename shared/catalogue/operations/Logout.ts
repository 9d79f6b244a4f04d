import { defineOperation } from '../types.js';
import { results } from '../complex-types.js';

export const Logout = defineOperation({
  name: 'Logout',
  documentation: 'Explicit end of the provider session. True when a live session was ended.',
  authentication: 'none',
  params: [],
  result: results.boolean,
});
