/**
 * RocketMQ's BrokerStatsManager: message counts and bytes per topic, per topic@group and for the whole
 * broker, each readable over the last minute, hour and day (VIEW_BROKER_STATS_DATA, statsAll,
 * brokerStatus). An item keeps running totals and a few dated samples of them per window; a window's
 * figures are the totals now minus the oldest sample still inside it, so nothing runs on a timer:
 * samples are taken when an item is touched or read.
 * @pure
 */
import type { Clock } from '../common/clock.js';
import { BrokerMetricsRecorder } from './metrics/broker-metrics-recorder.js';

/** The stats names RocketMQ's tools ask for (BrokerStatsManager's constants). */
export const StatsName = Object.freeze({
  TOPIC_PUT_NUMS: 'TOPIC_PUT_NUMS',
  TOPIC_PUT_SIZE: 'TOPIC_PUT_SIZE',
  GROUP_GET_NUMS: 'GROUP_GET_NUMS',
  GROUP_GET_SIZE: 'GROUP_GET_SIZE',
  SNDBCK_PUT_NUMS: 'SNDBCK_PUT_NUMS',
  BROKER_PUT_NUMS: 'BROKER_PUT_NUMS',
  BROKER_GET_NUMS: 'BROKER_GET_NUMS',
} as const);

/** One window's figures (RocketMQ: StatsSnapshot as BrokerStatsItem carries it). */
export interface StatsWindow {
  sum: number;
  tps: number;
  avgpt: number;
}

interface Sample {
  at: number;
  value: number;
  times: number;
}

/** Sample spacing and how many samples a window keeps: a minute in 10 s steps, an hour in 10 min, a day in hours. */
const WINDOWS = {
  minute: { everyMs: 10_000, keep: 7 },
  hour: { everyMs: 600_000, keep: 7 },
  day: { everyMs: 3_600_000, keep: 25 },
} as const;
type WindowName = keyof typeof WINDOWS;

/** Totals of one key and their samples (RocketMQ: StatsItem). */
export class StatsItem {
  value = 0;
  times = 0;
  private readonly samples: Record<WindowName, Sample[]>;

  constructor(private readonly clock: Clock) {
    const at = clock.now();
    // The item starts from zero at its creation, so a window that began before it counts everything.
    this.samples = {
      minute: [{ at, value: 0, times: 0 }],
      hour: [{ at, value: 0, times: 0 }],
      day: [{ at, value: 0, times: 0 }],
    };
  }

  add(value: number, times = 1): void {
    this.sample();
    this.value += value;
    this.times += times;
  }

  /** Takes a sample in each window whose last one is a step old. */
  private sample(): void {
    const now = this.clock.now();
    for (const name of Object.keys(WINDOWS) as WindowName[]) {
      const list = this.samples[name];
      const last = list[list.length - 1] as Sample;
      if (now - last.at < WINDOWS[name].everyMs) continue;
      list.push({ at: now, value: this.value, times: this.times });
      if (list.length > WINDOWS[name].keep) list.shift();
    }
  }

  window(name: WindowName): StatsWindow {
    this.sample();
    const now = this.clock.now();
    const first = this.samples[name][0] as Sample;
    const sum = this.value - first.value;
    const times = this.times - first.times;
    const span = now - first.at;
    return { sum, tps: span > 0 ? (sum * 1000) / span : 0, avgpt: times > 0 ? sum / times : 0 };
  }

  /** Messages per second over the last `seconds` (the sample at or before that point, else the oldest). */
  tpsOver(seconds: number): number {
    const w = seconds <= 60 ? 'minute' : seconds <= 3600 ? 'hour' : 'day';
    this.sample();
    const now = this.clock.now();
    const list = this.samples[w];
    let from = list[0] as Sample;
    for (const s of list) if (now - s.at >= seconds * 1000) from = s;
    const span = now - from.at;
    return span > 0 ? ((this.value - from.value) * 1000) / span : 0;
  }
}

/** The broker's stats table (RocketMQ: BrokerStatsManager), keyed by stats name then key. */
export class BrokerStatsManager {
  private readonly items = new Map<string, Map<string, StatsItem>>();
  /** Broker totals at the start of today and of yesterday (RocketMQ: BrokerStats, read by brokerStatus). */
  private dayMarks = { day: -1, putToday: 0, getToday: 0, putYesterday: 0, getYesterday: 0 };
  /** What the Prometheus endpoint counts as it happens (request latency, message sizes, dead letters). */
  readonly metrics = new BrokerMetricsRecorder();

  constructor(
    private readonly clock: Clock,
    private readonly clusterName: string,
  ) {}

  private item(name: string, key: string, create: boolean): StatsItem | undefined {
    let byKey = this.items.get(name);
    if (!byKey) {
      if (!create) return undefined;
      this.items.set(name, (byKey = new Map()));
    }
    let it = byKey.get(key);
    if (!it && create) byKey.set(key, (it = new StatsItem(this.clock)));
    return it;
  }

  /** The keys counted under a stats name (topics, or `topic@group`). */
  keysOf(name: string): string[] {
    return [...(this.items.get(name)?.keys() ?? [])];
  }

  /** A stats item, or undefined when nothing was counted under it (RocketMQ: getStatsItem). */
  getStatsItem(name: string, key: string): StatsItem | undefined {
    return this.item(name, key, false);
  }

  /** Messages stored by a send (RocketMQ: incTopicPutNums / incTopicPutSize / incBrokerPutNums). */
  onPut(topic: string, messages: number, bytes: number): void {
    this.rollDay();
    this.item(StatsName.TOPIC_PUT_NUMS, topic, true)?.add(messages, 1);
    this.item(StatsName.TOPIC_PUT_SIZE, topic, true)?.add(bytes, 1);
    this.item(StatsName.BROKER_PUT_NUMS, this.clusterName, true)?.add(messages, 1);
  }

  /** Messages a pull returned (RocketMQ: incGroupGetNums / incGroupGetSize / incBrokerGetNums). */
  onGet(group: string, topic: string, messages: number, bytes: number): void {
    this.rollDay();
    const key = `${topic}@${group}`;
    this.item(StatsName.GROUP_GET_NUMS, key, true)?.add(messages, 1);
    this.item(StatsName.GROUP_GET_SIZE, key, true)?.add(bytes, 1);
    this.item(StatsName.BROKER_GET_NUMS, this.clusterName, true)?.add(messages, 1);
  }

  /** A message sent back for retry (RocketMQ: incSendBackNums). */
  onSendBack(group: string, topic: string): void {
    this.item(StatsName.SNDBCK_PUT_NUMS, `${topic}@${group}`, true)?.add(1, 1);
  }

  /** Forgets a deleted group's items (RocketMQ: onGroupDeleted). */
  onGroupDeleted(group: string): void {
    this.metrics.onGroupDeleted(group);
    for (const byKey of this.items.values()) {
      for (const key of [...byKey.keys()]) if (key.endsWith(`@${group}`)) byKey.delete(key);
    }
  }

  /** Messages put per second into a topic over the last minute (RocketMQ: tpsTopicPutNums). */
  tpsTopicPutNums(topic: string): number {
    return this.getStatsItem(StatsName.TOPIC_PUT_NUMS, topic)?.window('minute').tps ?? 0;
  }

  /** Messages a group consumed per second from a topic over the last minute (RocketMQ: tpsGroupGetNums). */
  tpsGroupGetNums(group: string, topic: string): number {
    return this.getStatsItem(StatsName.GROUP_GET_NUMS, `${topic}@${group}`)?.window('minute').tps ?? 0;
  }

  /** The broker's put and get totals. */
  totals(): { put: number; get: number } {
    return {
      put: this.getStatsItem(StatsName.BROKER_PUT_NUMS, this.clusterName)?.value ?? 0,
      get: this.getStatsItem(StatsName.BROKER_GET_NUMS, this.clusterName)?.value ?? 0,
    };
  }

  /** RocketMQ's BrokerStats figures: totals at this and the previous midnight (local time). */
  dayTotals(): { putToday: number; getToday: number; putYesterday: number; getYesterday: number } {
    this.rollDay();
    const { putToday, getToday, putYesterday, getYesterday } = this.dayMarks;
    return { putToday, getToday, putYesterday, getYesterday };
  }

  /** At the first call of a new day, today's marks become yesterday's and the totals now become today's. */
  private rollDay(): void {
    const d = new Date(this.clock.now());
    const day = new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
    if (day === this.dayMarks.day) return;
    const t = this.totals();
    const first = this.dayMarks.day < 0;
    this.dayMarks = {
      day,
      putYesterday: first ? 0 : this.dayMarks.putToday,
      getYesterday: first ? 0 : this.dayMarks.getToday,
      putToday: t.put,
      getToday: t.get,
    };
  }

  /** Put and get messages per second over 10 s, 60 s and 600 s, as RocketMQ's runtime info writes them. */
  tpsTriple(name: 'BROKER_PUT_NUMS' | 'BROKER_GET_NUMS'): string {
    const it = this.getStatsItem(name, this.clusterName);
    return [10, 60, 600].map((s) => javaDouble(it?.tpsOver(s) ?? 0)).join(' ');
  }
}

/** A double as Java's String.valueOf writes it for ordinary magnitudes: `0.0`, `12.5`. */
export function javaDouble(n: number): string {
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : n < 0 ? '-Infinity' : 'NaN';
  return Number.isInteger(n) ? `${n}.0` : String(n);
}
