/** An instant with .NET's 100 ns resolution: epoch milliseconds plus the ticks below them. */
export interface EventInstant {
  epochMs: number;
  /** 0..9999 */
  subMsTicks: number;
}
