/**
 * What the admin API answers (docs/admin-api.md).
 * Times are ISO-8601 strings, event ids decimal strings.
 */
export interface ProviderView {
  systemUser: string;
  enabled: boolean;
  timeZone: string | null;
  requireRegisteredVehicles: boolean;
  createdAt: string;
  updatedAt: string;
}

export type CommandState = 'pending' | 'in_process' | 'succeeded' | 'failed' | 'expired' | 'cancelled';
export const COMMAND_STATES: readonly CommandState[] = ['pending', 'in_process', 'succeeded', 'failed', 'expired', 'cancelled'];

export interface CommandView {
  numero: number;
  systemUser?: string;
  cmd: string;
  unidad: string;
  equipo: string;
  state: CommandState;
  createdAt: string;
  expiresAt: string;
  deliveries: number;
  lastDeliveredAt: string | null;
  finishedAt: string | null;
  history: { at: string; kind: string; message: string | null }[];
}

export interface EventView {
  id: string;
  systemUser: string;
  dominio: string;
  nroSerie: string;
  codigo: string;
  latitud: number;
  longitud: number;
  altitud: number | null;
  velocidad: number | null;
  rumbo: number | null;
  validPosition: boolean;
  valido: boolean | null;
  eventTime: string | null;
  receptionTime: string | null;
  receivedAt: string;
  storedAt: string;
  operation: string;
}

export interface VehicleView {
  dominio: string;
  nroSerie: string;
  registeredAt: string;
  lastReport: string | null;
}

export interface LockoutView {
  systemUser: string;
  /** null: the lock covers every address of the SystemUser. */
  address: string | null;
  until: string;
}

export interface Overview {
  mode: 'embedded' | 'scale-out';
  ready: boolean;
  backends: { name: string; ok: boolean; detail?: string }[];
  eventsPerSecond: { at: string; events: number }[];
  providers: { systemUser: string; events15m: number; lastEventAt: string | null }[];
  workerLag: number | null;
  poisonMessages: number | null;
  lockouts: number;
  /** The map's tiles (CONSOLE_MAP_TILE_URL, CONSOLE_MAP_ATTRIBUTION). */
  map: { tileUrl: string; attribution: string };
}

/** One refusal of GET /admin/refusals. */
export interface RefusalView {
  at: string;
  systemUser: string | null;
  operation: string;
  answer: string;
  reason: string;
  address: string;
}
