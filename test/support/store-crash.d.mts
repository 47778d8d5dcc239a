export interface CrashRoundOptions {
  mode?: 'async' | 'sync';
  /** Kill the child once it has acknowledged this many appends (default: random, 20 to 2000). */
  killAfterAcks?: number;
  segmentBytes?: number;
}
export interface CrashRoundResult {
  acknowledged: number;
  /** Acknowledged appends read back through the consume queues. */
  readBack: number;
  /** Records read twice (by their unique body prefix). */
  duplicates: number;
  problems: string[];
  killAfterAcks: number;
  commitLogMax: number;
}
export function runCrashRound(dir: string, options?: CrashRoundOptions): Promise<CrashRoundResult>;
