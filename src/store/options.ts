/**
 * MessageStore options: one type with a doc comment per field (default, unit), frozen defaults and one
 * resolve function that validates with zod and throws an InvalidArgumentError naming the option.
 * Defaults are RocketMQ's MessageStoreConfig values.
 */
import { parseStrictOptions } from '../common/option-errors.js';
import { statfsSync } from 'node:fs';
import os from 'node:os';
import { z } from 'zod';
import { systemClock, type Clock } from '../common/clock.js';
import { InvalidArgumentError } from '../common/errors.js';
import { silentLogger, type Logger } from '../common/logger.js';
import type { HostAddress } from '../common/message.js';
import { DEFAULT_MESSAGE_DELAY_LEVEL, parseDelayLevels } from './delay-levels.js';
import { CQ_UNIT_SIZE } from './layout.js';

export type FlushDiskType = 'ASYNC_FLUSH' | 'SYNC_FLUSH';
export type BrokerRole = 'ASYNC_MASTER' | 'SYNC_MASTER' | 'SLAVE';

export interface MessageStoreOptions {
  /** Root directory of the store (required). Created if missing. */
  storePath: string;
  /** Bytes per commit-log segment. Default 1 GiB (RocketMQ). Tests use a few KiB. */
  mappedFileSizeCommitLog?: number;
  /** Bytes per consume-queue file, a multiple of 20. Default 300000 units × 20 = 6,000,000. */
  mappedFileSizeConsumeQueue?: number;
  /** ASYNC_FLUSH (default): fsync every flushIntervalCommitLogMs. SYNC_FLUSH: fsync before acknowledging. */
  flushDiskType?: FlushDiskType;
  /** Period of the commit-log fsync in ASYNC_FLUSH, ms. Default 500. */
  flushIntervalCommitLogMs?: number;
  /** Period of the consume-queue write+fsync and checkpoint, ms. Default 1000. */
  flushIntervalConsumeQueueMs?: number;
  /** SYNC_FLUSH: answer FLUSH_DISK_TIMEOUT when the fsync takes longer than this, ms. Default 5000. */
  syncFlushTimeoutMs?: number;
  /** Commit-log segments last modified longer ago than this are deleted. Default 72 hours. */
  fileReservedTimeHours?: number;
  /** Hours of the day (local time, `;`-separated) when expired segments are deleted. Default "04". */
  deleteWhen?: string;
  /** Period of the retention check, ms. Default 10000. */
  cleanResourceIntervalMs?: number;
  /**
   * Delete expired commit-log segments at once (not only at `deleteWhen`) while the store's disk is fuller
   * than this percentage. Default 75 (RocketMQ's diskMaxUsedSpaceRatio).
   */
  diskMaxUsedSpaceRatio?: number;
  /**
   * Delete the oldest segments even when not expired while the disk is fuller than this percentage.
   * Default 85 (RocketMQ's diskSpaceCleanForciblyRatio).
   */
  diskSpaceCleanForciblyRatio?: number;
  /** Refuse appends while the disk is fuller than this percentage. Default 90 (RocketMQ's diskSpaceWarningLevelRatio). */
  diskSpaceWarningLevelRatio?: number;
  /** Disk usage of the store directory as a percentage; default reads fs.statfsSync. Injectable for tests. */
  diskUsedRatio?: (storePath: string) => number;
  /** How often putMessage re-reads the disk usage, ms (0: every append). Default 1000. */
  diskCheckIntervalMs?: number;
  /**
   * Check each record's body CRC when it is read for a pull or a lookup, and skip a record whose CRC
   * fails instead of serving it. Recovery always checks the records it scans. Default true.
   */
  checkCRCOnRead?: boolean;
  /** Largest accepted record body, bytes. Default 4 MiB. */
  maxMessageSize?: number;
  /** RocketMQ's delay levels. Default "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h". */
  messageDelayLevel?: string;
  /** The store host written into each record and its offset message id. Default 127.0.0.1:10911. */
  storeHost?: HostAddress;
  /** Per-pull caps while the data is in memory: 32 messages / 256 KiB. */
  maxTransferCountOnMessageInMemory?: number;
  maxTransferBytesOnMessageInMemory?: number;
  /** Per-pull caps once the data is on disk: 8 messages / 64 KiB. */
  maxTransferCountOnMessageInDisk?: number;
  maxTransferBytesOnMessageInDisk?: number;
  /** Scan bound of a filtered read, in consume-queue bytes (RocketMQ's name; 16000 = 800 entries). */
  maxFilterMessageCount?: number;
  /** Share of RAM (percent) behind the commit-log head counted as "in memory". Default 40. */
  accessMessageInMemoryMaxRatio?: number;
  /**
   * RAM size used by the in-memory estimate, bytes. Default os.totalmem(), or the process's memory limit
   * (a container's cgroup) when that is smaller.
   */
  totalPhysicalMemoryBytes?: number;
  /** Bytes of recently written commit log kept in memory for reads. Default 128 MiB. */
  readCacheSizeBytes?: number;
  /**
   * Consume-queue files kept open at once, across every queue of the store; the least recently used is
   * closed beyond this and opened again when needed (a store with thousands of queues must not run out
   * of file descriptors). Default 1024.
   */
  maxOpenConsumeQueueFiles?: number;
  /** Consume-queue files one getMessage may walk. Default 1 (RocketMQ travelCqFileNumWhenGetMessage). */
  travelCqFileNumWhenGetMessage?: number;
  /** SLAVE makes nextOffsetCorrection keep the old offset unless offsetCheckInSlave. Default ASYNC_MASTER. */
  brokerRole?: BrokerRole;
  offsetCheckInSlave?: boolean;
  clock?: Clock;
  logger?: Logger;
}

export interface ResolvedStoreOptions extends Required<Omit<MessageStoreOptions, 'diskUsedRatio'>> {
  diskUsedRatio: (storePath: string) => number;
  /** Delay per level in ms (index 0 = level 1). */
  delayLevelsMs: number[];
}

const KiB = 1024;
const MiB = 1024 * KiB;

export const STORE_DEFAULTS = Object.freeze({
  mappedFileSizeCommitLog: 1024 * MiB,
  mappedFileSizeConsumeQueue: 300_000 * CQ_UNIT_SIZE,
  flushDiskType: 'ASYNC_FLUSH' as FlushDiskType,
  flushIntervalCommitLogMs: 500,
  flushIntervalConsumeQueueMs: 1000,
  syncFlushTimeoutMs: 5000,
  fileReservedTimeHours: 72,
  deleteWhen: '04',
  cleanResourceIntervalMs: 10_000,
  diskMaxUsedSpaceRatio: 75,
  diskSpaceCleanForciblyRatio: 85,
  diskSpaceWarningLevelRatio: 90,
  diskCheckIntervalMs: 1000,
  maxMessageSize: 4 * MiB,
  checkCRCOnRead: true,
  messageDelayLevel: DEFAULT_MESSAGE_DELAY_LEVEL,
  storeHost: Object.freeze({ ip: '127.0.0.1', port: 10911 }),
  maxTransferCountOnMessageInMemory: 32,
  maxTransferBytesOnMessageInMemory: 256 * KiB,
  maxTransferCountOnMessageInDisk: 8,
  maxTransferBytesOnMessageInDisk: 64 * KiB,
  maxFilterMessageCount: 16_000,
  accessMessageInMemoryMaxRatio: 40,
  readCacheSizeBytes: 128 * MiB,
  travelCqFileNumWhenGetMessage: 1,
  maxOpenConsumeQueueFiles: 1024,
  brokerRole: 'ASYNC_MASTER' as BrokerRole,
  offsetCheckInSlave: false,
});

const positiveInt = z.number().int().positive();
const hostSchema = z.object({ ip: z.string().min(1), port: z.number().int().min(0).max(65535) });

const schema = z.object({
  storePath: z.string().min(1),
  mappedFileSizeCommitLog: positiveInt.min(4096, 'must be at least 4096 bytes'),
  mappedFileSizeConsumeQueue: positiveInt.refine((n) => n % CQ_UNIT_SIZE === 0, 'must be a multiple of 20'),
  flushDiskType: z.enum(['ASYNC_FLUSH', 'SYNC_FLUSH']),
  flushIntervalCommitLogMs: positiveInt,
  flushIntervalConsumeQueueMs: positiveInt,
  syncFlushTimeoutMs: positiveInt,
  fileReservedTimeHours: z.number().nonnegative(),
  deleteWhen: z.string().regex(/^\d{1,2}(;\d{1,2})*$/, 'must be hours like "04" or "04;16"'),
  cleanResourceIntervalMs: positiveInt,
  diskMaxUsedSpaceRatio: z.number().min(10).max(95),
  diskSpaceCleanForciblyRatio: z.number().min(10).max(99),
  diskSpaceWarningLevelRatio: z.number().min(10).max(99),
  diskUsedRatio: z.custom<(p: string) => number>((v) => typeof v === 'function', 'must be a function').optional(),
  diskCheckIntervalMs: z.number().int().nonnegative(),
  maxMessageSize: positiveInt,
  checkCRCOnRead: z.boolean(),
  messageDelayLevel: z.string().superRefine((s, ctx) => {
    try {
      parseDelayLevels(s);
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: (e as Error).message });
    }
  }),
  storeHost: hostSchema,
  maxTransferCountOnMessageInMemory: positiveInt,
  maxTransferBytesOnMessageInMemory: positiveInt,
  maxTransferCountOnMessageInDisk: positiveInt,
  maxTransferBytesOnMessageInDisk: positiveInt,
  maxFilterMessageCount: positiveInt,
  accessMessageInMemoryMaxRatio: z.number().min(0).max(100),
  totalPhysicalMemoryBytes: positiveInt,
  readCacheSizeBytes: z.number().int().nonnegative(),
  travelCqFileNumWhenGetMessage: positiveInt,
  maxOpenConsumeQueueFiles: positiveInt.min(4, 'must be at least 4').max(1_000_000),
  brokerRole: z.enum(['ASYNC_MASTER', 'SYNC_MASTER', 'SLAVE']),
  offsetCheckInSlave: z.boolean(),
});

/**
 * The RAM the page cache can hold the log in: the machine's, or the memory limit the process runs under
 * when smaller (in a container, os.totalmem() is the host's). Node reports no limit as 0 or 2^64.
 */
function physicalMemory(): number {
  const limit = process.constrainedMemory?.() ?? 0;
  return limit > 0 ? Math.min(os.totalmem(), limit) : os.totalmem();
}

/** Fills defaults and validates; throws InvalidArgumentError naming the first bad option. */
export function resolveStoreOptions(options: MessageStoreOptions): ResolvedStoreOptions {
  if (options === null || typeof options !== 'object') {
    throw new InvalidArgumentError('options', 'MessageStore options must be an object');
  }
  const { clock, logger, ...rest } = options;
  const defined = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
  const v = parseStrictOptions(
    schema,
    { ...STORE_DEFAULTS, totalPhysicalMemoryBytes: physicalMemory(), ...defined },
    'MessageStore',
  );
  return {
    ...v,
    storeHost: { ...v.storeHost },
    diskUsedRatio: v.diskUsedRatio ?? defaultDiskUsedRatio,
    delayLevelsMs: parseDelayLevels(v.messageDelayLevel),
    clock: clock ?? systemClock,
    logger: logger ?? silentLogger,
  };
}

/** Percentage of the filesystem holding `dir` in use (RocketMQ: UtilAll.getDiskPartitionSpaceUsedPercent). */
export function defaultDiskUsedRatio(dir: string): number {
  const s = statfsSync(dir);
  if (s.blocks === 0) return 0;
  return ((s.blocks - s.bfree) / s.blocks) * 100;
}
