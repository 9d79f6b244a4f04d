import { defineOperation } from '../types.js';
import { results } from '../complex-types.js';

export const InSession = defineOperation({
  name: 'InSession',
  documentation: 'True when the request carries a live session.',
  authentication: 'none',
  params: [],
  result: results.boolean,
});
