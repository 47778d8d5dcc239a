// Types of bench/compare-lib.mjs, for the TypeScript test that covers it.
export declare const SYSTEMS: readonly string[];
export declare const DRAINS: readonly { key: string; consumers: number; processes: number; label: string }[];
export declare const DEFAULTS: Readonly<{
  messages: number;
  rounds: number;
  rate: number;
  seconds: number;
  bodyBytes: number;
  sendsFrom: 'ready' | 'start';
}>;

export declare class UsageError extends Error {}

export interface CompareOptions {
  messages: number;
  rounds: number;
  rate: number;
  seconds: number;
  bodyBytes: number;
  only: string[];
  liteLoop: 'iter' | 'poll';
  sendsFrom: 'ready' | 'start';
  writeResults: boolean;
  help: boolean;
  usage: string;
}
export declare function parseArgs(argv: readonly string[]): CompareOptions;
export declare function findKitDir(
  root: string,
  envDir: string | undefined,
  exists: (p: string) => boolean,
  folder?: string,
): string;
export declare function percentile(sorted: ArrayLike<number>, p: number): number;

export interface LatencySummary {
  n: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
}
export declare function latencySummary(samples: ArrayLike<number> | Iterable<number>): LatencySummary;
export declare function median(values: readonly number[]): number;
export declare function secondHalfRate(
  milestones: readonly (readonly number[])[],
  total: number,
  lastAt: number,
): number;

export declare class SeqCounter {
  constructor(n: number);
  readonly counts: Uint8Array;
  deliveries: number;
  distinct: number;
  outOfRange: number;
  add(seq: number): boolean;
  merge(counts: Uint8Array | string): void;
  summary(): { distinct: number; missing: number; duplicates: number; outOfRange: number };
  toBase64(): string;
}

export declare function cpuTicksFromStat(stat: string): number;
export declare function ppidFromStat(stat: string): number;
export declare function statusBytes(status: string, field: string): number;
export declare function parseJavaDrain(out: string):
  | {
      preloadFailed: number;
      complete: boolean;
      distinct: number;
      deliveries: number;
      msgPerS: number;
      msgPerSFromStart: number;
    }
  | undefined;
export declare function parseJavaLatency(out: string): LatencySummary | undefined;

export interface DrainCell {
  msgPerS: number;
  ratio: number;
  secondHalfMsgPerS: number;
  duplicates: number;
  missing: number;
  consumerCpuUsPerMsg: number;
  brokerCpuUsPerMsg: number;
  consumerRssMiB: number;
}
export interface SummaryRow {
  system: string;
  rounds: number;
  skipped?: string;
  errors: string[];
  c1?: DrainCell;
  c4p1?: DrainCell;
  c4p2?: DrainCell;
  latency?: { p50: number; p99: number; p999: number; max: number };
  brokerRssMiB: number;
}
export declare function summarise(runs: readonly object[], systems: readonly string[]): SummaryRow[];
export declare function formatTable(rows: readonly SummaryRow[]): string;
export declare function brokerAddresses(text: string): { http?: string; tcp?: string };
export declare function xreadgroupArgs(group: string, name: string, stream: string): (string | number)[];
