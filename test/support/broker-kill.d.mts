export interface BrokerKillOptions {
  /** Start the broker with --sync-flush. */
  syncFlush: boolean;
  /** SIGKILLs in the run. */
  kills: number;
  /** Kill after this many more acknowledged sends (and stop sending this many after the last restart). */
  killAfterAcks: number;
  /** Names the run's topic and group. */
  tag: string;
  /** How long the group may take to consume every acknowledged message at the end (default 60 s). */
  drainTimeoutMs?: number;
}
export interface BrokerKillResult {
  sent: number;
  acknowledged: number;
  consumed: number;
  /** Acknowledged and never consumed. */
  lost: number;
  /** Deliveries beyond the first of a message. */
  duplicates: number;
}
export function brokerKillRun(options: BrokerKillOptions): Promise<BrokerKillResult>;
