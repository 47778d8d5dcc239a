/**
 * RocketMQ's broker runtime figures (AdminBrokerProcessor.prepareRuntimeInfo over
 * DefaultMessageStore.getRuntimeInfo and StoreStatsService.getRuntimeInfo), under RocketMQ's keys, as
 * GET_BROKER_RUNTIME_INFO answers them and mqadmin's brokerStatus and clusterList read them. Figures this
 * broker has are real (versions, put/get counts and rates, offsets, disk use, start time); the thread-pool
 * queues RocketMQ reports do not exist here (requests are not queued behind executors) and read 0 with
 * RocketMQ's default capacities.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SCHEDULE_TOPIC } from '../common/message.js';
import type { Clock } from '../common/clock.js';
import type { MessageStore } from '../store/index.js';
import { javaDouble, type BrokerStatsManager } from './broker-stats-manager.js';
import type { ScheduleMessageService } from './schedule-message-service.js';

export interface RuntimeInfoSources {
  bootTimestamp: number;
  now: number;
  storePath: string;
  store: MessageStore;
  stats: BrokerStatsManager;
  versionEntries: Record<string, string>;
  /** Store time of the oldest message, or -1 when the store is empty. */
  earliestMessageTimeStamp: number;
  /** Per delay level: the level's delivered-up-to offset and its queue's max offset. */
  scheduleOffsets: ReadonlyArray<{ level: number; offset: number; maxOffset: number }>;
}

/** Used share of the file system holding `dir`, 0..1, or -1 when it cannot be read (RocketMQ: getDiskPartitionSpaceUsedPercent). */
function diskUsedRatio(dir: string): number {
  try {
    const s = fs.statfsSync(dir);
    const total = s.blocks * s.bsize;
    if (total <= 0) return -1;
    return (total - s.bfree * s.bsize) / total;
  } catch {
    return -1;
  }
}

/** Bytes as RocketMQ's MixAll.humanReadableByteCount(bytes, false) writes them: `0 B`, `79.3 GiB`. */
export function humanBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const exp = Math.min(6, Math.floor(Math.log(bytes) / Math.log(1024)));
  return `${(bytes / 1024 ** exp).toFixed(1)} ${'KMGTPE'[exp - 1]}iB`;
}

function formatRuntime(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return `[ ${Math.floor(s / 86400)} days, ${Math.floor(s / 3600) % 24} hours, ${Math.floor(s / 60) % 60} minutes, ${s % 60} seconds ]`;
}

export function buildRuntimeInfo(src: RuntimeInfoSources): Record<string, string> {
  const { stats, store } = src;
  const totals = stats.totals();
  const days = stats.dayTotals();
  const putTimes = Math.max(1, totals.put);
  const commitLogDir = path.join(src.storePath, 'commitlog');
  const ratio = diskUsedRatio(fs.existsSync(commitLogDir) ? commitLogDir : src.storePath);
  const cqRatio = diskUsedRatio(src.storePath);
  const info: Record<string, string> = {
    ...src.versionEntries,
    bootTimestamp: String(src.bootTimestamp),
    runtime: formatRuntime(src.now - src.bootTimestamp),
    putMessageEntireTimeMax: '0',
    putMessageTimesTotal: String(putTimes),
    putMessageFailedTimes: '0',
    putMessageSizeTotal: String(Math.max(0, store.getCommitLogMaxOffset())),
    putMessageDistributeTime: 'null',
    putMessageAverageSize: javaDouble(totals.put > 0 ? Math.max(0, store.getCommitLogMaxOffset()) / totals.put : 0),
    dispatchMaxBuffer: '0',
    getMessageEntireTimeMax: '0',
    putTps: stats.tpsTriple('BROKER_PUT_NUMS'),
    getFoundTps: stats.tpsTriple('BROKER_GET_NUMS'),
    getMissTps: '0.0 0.0 0.0',
    getTotalTps: stats.tpsTriple('BROKER_GET_NUMS'),
    getTransferedTps: stats.tpsTriple('BROKER_GET_NUMS'),
    // RocketMQ 5 corrected the spelling; its mqadmin (clusterList, exportMetrics) reads only the new key.
    getTransferredTps: stats.tpsTriple('BROKER_GET_NUMS'),
    putLatency99: '0.00',
    putLatency999: '0.00',
    commitLogDiskRatio: javaDouble(ratio),
    [`commitLogDiskRatio_${commitLogDir}`]: javaDouble(ratio),
    consumeQueueDiskRatio: javaDouble(cqRatio),
    commitLogMinOffset: String(store.getCommitLogMinOffset()),
    commitLogMaxOffset: String(store.getCommitLogMaxOffset()),
    msgPutTotalYesterdayMorning: String(days.putYesterday),
    msgPutTotalTodayMorning: String(days.putToday),
    msgPutTotalTodayNow: String(totals.put),
    msgGetTotalYesterdayMorning: String(days.getYesterday),
    msgGetTotalTodayMorning: String(days.getToday),
    msgGetTotalTodayNow: String(totals.get),
    sendThreadPoolQueueSize: '0',
    sendThreadPoolQueueCapacity: '10000',
    pullThreadPoolQueueSize: '0',
    pullThreadPoolQueueCapacity: '100000',
    queryThreadPoolQueueSize: '0',
    queryThreadPoolQueueCapacity: '20000',
    EndTransactionQueueSize: '0',
    EndTransactionThreadPoolQueueCapacity: '100000',
    dispatchBehindBytes: '0',
    pageCacheLockTimeMills: '0',
    sendThreadPoolQueueHeadWaitTimeMills: '0',
    pullThreadPoolQueueHeadWaitTimeMills: '0',
    queryThreadPoolQueueHeadWaitTimeMills: '0',
    // RocketMQ 5's keys, which its clusterList prints: the POP ack pool, the broker serving (its schedule,
    // transaction check and POP revive services run while it is up) and the timer wheel, which this broker
    // does not have (delays go through the delay levels), read as RocketMQ reads a disabled one.
    ackThreadPoolQueueSize: '0',
    ackThreadPoolQueueCapacity: '100000',
    ackThreadPoolQueueHeadWaitTimeMills: '0',
    brokerActive: 'true',
    timerReadBehind: '0',
    timerOffsetBehind: '0',
    timerCongestNum: '0',
    timerEnqueueTps: '0.0',
    timerDequeueTps: '0.0',
    earliestMessageTimeStamp: String(src.earliestMessageTimeStamp),
    startAcceptSendRequestTimeStamp: '0',
    remainTransientStoreBufferNumbs: '2147483647',
    remainHowManyDataToFlush: '0 B',
  };
  for (const s of src.scheduleOffsets) info[`scheduleMessageOffset_${s.level}`] = `${s.offset},${s.maxOffset}`;
  try {
    const st = fs.statfsSync(src.storePath);
    info.commitLogDirCapacity = `Total : ${humanBytes(st.blocks * st.bsize)}, Free : ${humanBytes(st.bavail * st.bsize)}.`;
  } catch {
    // RocketMQ leaves the key out when the store directory is missing.
  }
  return info;
}

/** What a broker's runtime figures are read from, each time they are asked for. */
export interface BrokerRuntimeParts {
  clock: Clock;
  storePath: string;
  store: MessageStore;
  stats: BrokerStatsManager;
  schedule: ScheduleMessageService;
  versionEntries: () => Record<string, string>;
}

/** A broker's runtime figures (GET_BROKER_RUNTIME_INFO), with what they need kept between two asks. */
export class BrokerRuntimeInfo {
  readonly #bootTimestamp: number;
  /** Store time of the oldest message, read in the background at each ask; -1 while the store is empty. */
  #earliestMessageTime = -1;

  constructor(private readonly parts: BrokerRuntimeParts) {
    this.#bootTimestamp = parts.clock.now();
    this.#refreshEarliestMessageTime();
  }

  read(): Record<string, string> {
    const { clock, storePath, store, stats, schedule } = this.parts;
    this.#refreshEarliestMessageTime();
    const scheduleOffsets = [];
    for (let level = 1; level <= schedule.maxDelayLevel; level++) {
      const offset = schedule.getOffset(level);
      if (offset === undefined) continue;
      scheduleOffsets.push({ level, offset, maxOffset: store.getMaxOffsetInQueue(SCHEDULE_TOPIC, level - 1) });
    }
    return buildRuntimeInfo({
      bootTimestamp: this.#bootTimestamp,
      now: clock.now(),
      storePath,
      store,
      stats,
      versionEntries: this.parts.versionEntries(),
      earliestMessageTimeStamp: this.#earliestMessageTime,
      scheduleOffsets,
    });
  }

  #refreshEarliestMessageTime(): void {
    const store = this.parts.store;
    const min = store.getCommitLogMinOffset();
    if (store.getCommitLogMaxOffset() <= Math.max(0, min)) {
      this.#earliestMessageTime = -1;
      return;
    }
    store
      .lookMessageByOffset(Math.max(0, min))
      .then((m) => {
        if (m) this.#earliestMessageTime = m.storeTimestamp;
      })
      .catch(() => undefined);
  }
}
