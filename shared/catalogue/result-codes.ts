/**
 * The result codes of the InsertarEvento family, declared once (docs/protocol.md §Result codes; a
 * test checks that table against this one). A positive result is the stored event's id; clients
 * retry on negative codes.
 */
export const ResultCode = {
  /** Wrong credentials, or the provider is disabled or locked out. */
  InvalidCredentials: -1,
  /** No live session (InsertarEvento only). */
  NoSession: -2,
  /** Invalid event: empty Dominio, a missing or unreadable date, a number that is not finite, a field over its limit. */
  InvalidEvent: -3,
  /** The vehicle is not on the provider's trip (providers with `requireRegisteredVehicles`). */
  VehicleNotRegistered: -4,
  /** Temporarily unable to store (a backend down, or slower than APPEND_TIMEOUT_MS): retry later. */
  Unavailable: -5,
  /** Over the provider's RATE_LIMIT_EVENTS_PER_SECOND. */
  RateLimited: -6,
} as const;
