export interface CrashRoundOptions {
  mode?: 'async' | 'sync';
  killAfterMs?: number;
  segmentBytes?: number;
}
export interface CrashRoundResult {
  acknowledged: number;
  problems: string[];
  killedAfterMs: number;
  commitLogMax: number;
}
export function runCrashRound(dir: string, options?: CrashRoundOptions): Promise<CrashRoundResult>;
