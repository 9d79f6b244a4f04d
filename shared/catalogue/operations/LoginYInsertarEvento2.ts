import { refusals } from '../refusals.js';
import { defineOperation } from '../types.js';
import { ArrayOfPSensor, CREDENTIALS, EVENT_HEAD, EVENT_TIMES, MAX_SENSORS, results } from '../complex-types.js';

export const LoginYInsertarEvento2 = defineOperation({
  name: 'LoginYInsertarEvento2',
  documentation: 'Authenticates and inserts an event with its validity flag and sensor readings.',
  authentication: 'credentials',
  refusals: refusals.insertWithCredentials,
  params: [
    ...CREDENTIALS,
    ...EVENT_HEAD,
    ...EVENT_TIMES,
    { name: 'Valido', type: 'boolean' },
    { name: 'Sensores', type: ArrayOfPSensor, maxItems: MAX_SENSORS },
  ],
  result: results.int,
});
