import { refusals } from '../refusals.js';
import { defineOperation } from '../types.js';
import { ArrayOfPEvento, CREDENTIALS, results } from '../complex-types.js';

export const LoginYInsertarEventos = defineOperation({
  name: 'LoginYInsertarEventos',
  documentation: 'Authenticates and inserts several events; returns one code per event, in order.',
  authentication: 'credentials',
  refusals: refusals.batch,
  params: [
    ...CREDENTIALS,
    { name: 'Eventos', type: ArrayOfPEvento, perItem: true },
  ],
  result: results.ArrayOfInt,
});
