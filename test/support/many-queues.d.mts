export interface ManyQueuesOptions {
  transport: 'http' | 'tcp';
  queues?: number;
  holdMs?: number;
  log?: (line: string) => void;
}
export const IN_FLIGHT_BOUND: number;
export interface ManyQueuesResult {
  queues: number;
  holdMs: number;
  sent: number;
  delivered: number;
  /** Messages delivered more than once. */
  duplicates: number;
  /** Warnings and errors that say a call timed out or a heartbeat failed. */
  problems: string[];
  /** Pulls that failed because the broker could not be reached or did not answer in time. */
  pullErrors: string[];
  /** Checks at which a member was missing from the broker's member list (evicted). */
  missing: string[];
  /** Rebalances that took queues from the first member before the second joined. */
  removedBeforeJoin: number;
  /** Queues the first member gave up at each rebalance. */
  removedFromA: number[];
  split: [number, number];
  /** From start() to ready, ms. */
  readyA: number;
  readyB: number;
}
export function runManyQueues(o: ManyQueuesOptions): Promise<ManyQueuesResult>;
export interface SplitResult {
  queues: number;
  holdMs: number;
  sent: number;
  delivered: number;
  duplicates: number;
  held: number[];
  missing: string[];
  members: { problems: string[] }[];
}
export function runSplitAcrossProcesses(o: ManyQueuesOptions): Promise<SplitResult>;
