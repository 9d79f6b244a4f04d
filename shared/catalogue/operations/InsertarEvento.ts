import { refusals } from '../refusals.js';
import { defineOperation } from '../types.js';
import { EVENT_HEAD, EVENT_TIMES, MAX_LENGTH, results } from '../complex-types.js';

export const InsertarEvento = defineOperation({
  name: 'InsertarEvento',
  documentation: 'Inserts an event; the provider is identified by the previous login. Returns the event id (> 0) or a negative error code.',
  authentication: 'session',
  refusals: refusals.insertWithSession,
  params: [
    ...EVENT_HEAD,
    { name: 'Rumbo', type: 'double' },
    ...EVENT_TIMES,
    { name: 'Crudo', type: 'string', maxLength: MAX_LENGTH.crudo },
  ],
  result: results.int,
});
