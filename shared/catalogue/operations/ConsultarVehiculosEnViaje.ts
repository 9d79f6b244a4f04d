import { refusals } from '../refusals.js';
import { defineOperation } from '../types.js';
import { CREDENTIALS, results } from '../complex-types.js';

export const ConsultarVehiculosEnViaje = defineOperation({
  name: 'ConsultarVehiculosEnViaje',
  documentation: 'Authenticates and lists the provider vehicles on an active trip, sorted by Dominio.',
  authentication: 'credentials',
  refusals: refusals.faultWithCredentials,
  params: [...CREDENTIALS],
  result: results.ArrayOfVehiculo,
});
