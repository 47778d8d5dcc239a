export interface TwoProcessRoundResult {
  /** Distinct messages consumed. */
  consumed: number;
  /** Deliveries beyond the first of a message. */
  duplicates: number;
  /** Deliveries per child process. */
  perProcess: number[];
}
export function twoProcessRound(
  options: Record<string, unknown>,
  topic: string,
  backlog: number,
  kind?: 'push' | 'lite',
  staggerMs?: number,
): Promise<TwoProcessRoundResult>;
