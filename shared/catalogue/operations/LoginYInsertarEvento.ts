import { refusals } from '../refusals.js';
import { defineOperation } from '../types.js';
import { CREDENTIALS, EVENT_HEAD, EVENT_TIMES, results } from '../complex-types.js';

export const LoginYInsertarEvento = defineOperation({
  name: 'LoginYInsertarEvento',
  documentation: 'Authenticates and inserts an event. Returns the event id (> 0) or a negative error code.',
  authentication: 'credentials',
  refusals: refusals.insertWithCredentials,
  params: [...CREDENTIALS, ...EVENT_HEAD, ...EVENT_TIMES],
  result: results.int,
});
