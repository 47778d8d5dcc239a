/**
 * ConsumerManager: who is in each consumer group, membership news, and liveness.
 *
 * - Registration by heartbeat (RocketMQ: ConsumerManager.registerConsumer): a client joins a group, the
 *   group's subscription table is updated, SQL subscriptions go to the ConsumerFilterManager.
 * - Membership news: RocketMQ sends NOTIFY_CONSUMER_IDS_CHANGED to every member when a member is added or
 *   removed and when the group's set of subscribed topics changes (RocketMQ 5: `r1 || r2` in
 *   registerConsumer), never for BROADCASTING groups, and only when the group's
 *   notifyConsumerIdsChangedEnable allows it (join / leave; an eviction always tells). Here each such
 *   CHANGE moves the group's membership VERSION and answers every WATCH_CONSUMER_IDS held for the group;
 *   a mere heartbeat renewal moves nothing.
 * - Liveness (RocketMQ: scanNotActiveChannel, channelExpiredTimeout 120 s): a member silent for
 *   `channelExpiredTimeoutMs` is evicted. A member that has held a watch must keep one: once its last
 *   open watch ends (answered or its connection closed) a new watch or a heartbeat must arrive within
 *   `watchRenewGraceMs`, else it is evicted — a killed client is noticed in seconds, not minutes. A
 *   heartbeat in between restarts that grace time (a member without subscriptions has nothing to watch and
 *   is released from it). A member holding an open watch counts as alive. Evictions are announced like leaves.
 */
import { systemClock, type Clock, type TimerHandle } from '../common/clock.js';
import { silentLogger, type Logger } from '../common/logger.js';
import type {
  BrokerSubscriptionData,
  ConsumerIdsSnapshot,
  ConsumerManagerApi,
  ConsumerRegistration,
} from './broker-context.js';
import { ConsumerGroupInfo } from './consumer-group-info.js';
import { ProducerManager } from './producer-manager.js';

/** The ConsumerFilterManager role as the ConsumerManager drives it (RocketMQ: REGISTER / UNREGISTER events). */
export interface ConsumerFilterRegistry {
  register(consumerGroup: string, subList: readonly BrokerSubscriptionData[]): void;
  unRegister(consumerGroup: string): void;
}

export interface ConsumerManagerOptions {
  clock?: Clock;
  logger?: Logger;
  /** A member silent this long is evicted, ms. Default 120000 (RocketMQ: channelExpiredTimeout). */
  channelExpiredTimeoutMs?: number;
  /** After a member's last watch ends, a new watch or heartbeat must come within this, ms. Default 3000. */
  watchRenewGraceMs?: number;
  /** Period of the liveness scan, ms. Default 1000. */
  scanIntervalMs?: number;
  /** Receives SQL subscriptions on registration and the group's removal. */
  consumerFilterManager?: ConsumerFilterRegistry;
}

export const CONSUMER_MANAGER_DEFAULTS = Object.freeze({
  channelExpiredTimeoutMs: 120_000,
  watchRenewGraceMs: 3000,
  scanIntervalMs: 1000,
});

export type { ConsumerIdsSnapshot, ConsumerRegistration };

export type EvictionReason = 'CHANNEL_EXPIRED' | 'WATCH_NOT_RENEWED';

interface WatchState {
  open: number;
  /** Evict unless a watch or heartbeat comes before this time (set when the last open watch ends). */
  deadline: number | null;
}

interface Waiter {
  clientId: string;
  finish(snapshot: ConsumerIdsSnapshot | null): void;
}

export class ConsumerManager implements ConsumerManagerApi {
  /** Producers announced by the same heartbeats; scanned with the consumers (RocketMQ: ClientHousekeepingService). */
  readonly producerManager: ProducerManager;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly channelExpiredTimeoutMs: number;
  private readonly watchRenewGraceMs: number;
  private readonly scanIntervalMs: number;
  private readonly filterRegistry: ConsumerFilterRegistry | undefined;
  private readonly consumerTable = new Map<string, ConsumerGroupInfo>();
  private readonly versions = new Map<string, number>();
  private lastVersion = 0;
  /** group → clientId → watch state. */
  private readonly watchStates = new Map<string, Map<string, WatchState>>();
  private readonly waiters = new Map<string, Set<Waiter>>();
  private scanTimer: TimerHandle | undefined;
  private stopped = false;
  /** Told of every membership change (the remoting listener sends NOTIFY_CONSUMER_IDS_CHANGED from here). */
  private readonly changeListeners = new Set<(group: string) => void>();

  constructor(options: ConsumerManagerOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.channelExpiredTimeoutMs = options.channelExpiredTimeoutMs ?? CONSUMER_MANAGER_DEFAULTS.channelExpiredTimeoutMs;
    this.watchRenewGraceMs = options.watchRenewGraceMs ?? CONSUMER_MANAGER_DEFAULTS.watchRenewGraceMs;
    this.scanIntervalMs = options.scanIntervalMs ?? CONSUMER_MANAGER_DEFAULTS.scanIntervalMs;
    this.filterRegistry = options.consumerFilterManager;
    this.producerManager = new ProducerManager(this.clock, this.channelExpiredTimeoutMs);
  }

  /** Starts the periodic liveness scan. */
  start(): void {
    if (this.scanTimer !== undefined || this.stopped) return;
    this.scanTimer = this.clock.setInterval(() => {
      this.scanNotActiveChannel();
      this.producerManager.scanNotActiveChannel();
    }, this.scanIntervalMs);
  }

  /** Stops the scan and answers every held watch with the current membership. Idempotent. */
  shutdown(): void {
    this.stopped = true;
    if (this.scanTimer !== undefined) this.clock.clearInterval(this.scanTimer);
    this.scanTimer = undefined;
    for (const group of [...this.waiters.keys()]) this.wakeWaiters(group);
  }

  getConsumerGroupInfo(group: string): ConsumerGroupInfo | undefined {
    return this.consumerTable.get(group);
  }

  /** Groups with at least one live member. */
  getGroups(): string[] {
    return [...this.consumerTable.keys()];
  }

  /** The group's membership version (0 when it never changed). */
  getVersion(group: string): number {
    return this.versions.get(group) ?? 0;
  }

  snapshot(group: string): ConsumerIdsSnapshot {
    return { version: this.getVersion(group), clientIds: this.consumerTable.get(group)?.getAllClientIds() ?? [] };
  }

  /**
   * RocketMQ: registerConsumer. Returns true when the client joined or the group's topic set changed.
   * `notifyEnabled` is the subscription group's notifyConsumerIdsChangedEnable.
   */
  registerConsumer(group: string, reg: ConsumerRegistration, notifyEnabled = true): boolean {
    const now = this.clock.now();
    let info = this.consumerTable.get(group);
    if (!info) {
      info = new ConsumerGroupInfo(group, reg.consumeType, reg.messageModel, reg.consumeFromWhere);
      this.consumerTable.set(group, info);
    }
    const joined = info.updateChannel(
      reg.clientId,
      reg.remoteAddress,
      reg.consumeType,
      reg.messageModel,
      reg.consumeFromWhere,
      now,
    );
    const topicsChanged = reg.withoutSub === true ? false : info.updateSubscription(reg.subscriptions, now);
    // A heartbeat between two watches proves the client alive at that moment only: it gets another grace
    // period to renew its watch, not a pass (a client killed right after a heartbeat must still be noticed
    // in seconds). A client that no longer subscribes to anything has nothing to watch: it is released.
    const ws = this.watchStates.get(group)?.get(reg.clientId);
    if (ws && ws.open === 0 && ws.deadline !== null) {
      ws.deadline =
        reg.withoutSub !== true && reg.subscriptions.length === 0
          ? null
          : Math.max(ws.deadline, now + this.watchRenewGraceMs);
    }
    if (joined) this.logger.info({ group, clientId: reg.clientId }, 'new consumer connected');
    if ((joined || topicsChanged) && notifyEnabled && info.messageModel !== 'BROADCASTING') this.change(group);
    if (reg.withoutSub !== true) this.filterRegistry?.register(group, reg.subscriptions);
    return joined || topicsChanged;
  }

  /** RocketMQ: unregisterConsumer (UNREGISTER_CLIENT). True when the client was a member. */
  unregisterConsumer(group: string, clientId: string, notifyEnabled = true): boolean {
    const info = this.consumerTable.get(group);
    if (!info) return false;
    const removed = info.unregisterChannel(clientId) !== undefined;
    this.watchStates.get(group)?.delete(clientId);
    if (removed) this.logger.info({ group, clientId }, 'consumer unregistered');
    this.removeGroupIfEmpty(info);
    if (removed && notifyEnabled && info.messageModel !== 'BROADCASTING') this.change(group);
    return removed;
  }

  /**
   * WATCH_CONSUMER_IDS: resolves at once when the group's version differs from `knownVersion`, else when it
   * moves or after `timeoutMs` (with the unchanged snapshot). Resolves `null` when `signal` aborts first
   * (the caller went away). While held, the call keeps the caller alive (see the file comment).
   */
  watch(
    group: string,
    clientId: string,
    knownVersion: number,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<ConsumerIdsSnapshot | null> {
    if (this.stopped || signal?.aborted || this.getVersion(group) !== knownVersion || timeoutMs <= 0) {
      this.watchBegan(group, clientId);
      this.watchEnded(group, clientId, this.clock.now());
      return Promise.resolve(signal?.aborted ? null : this.snapshot(group));
    }
    this.watchBegan(group, clientId);
    return new Promise((resolve) => {
      let done = false;
      const set = this.waiters.get(group) ?? new Set<Waiter>();
      this.waiters.set(group, set);
      const onAbort = (): void => waiter.finish(null);
      const timer = this.clock.setTimeout(() => waiter.finish(this.snapshot(group)), timeoutMs);
      const waiter: Waiter = {
        clientId,
        finish: (snapshot) => {
          if (done) return;
          done = true;
          this.clock.clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          set.delete(waiter);
          if (set.size === 0 && this.waiters.get(group) === set) this.waiters.delete(group);
          this.watchEnded(group, clientId, this.clock.now());
          resolve(snapshot);
        },
      };
      set.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Calls `listener` with the group's name whenever its membership version moves (a join, a leave, an
   * eviction, a changed topic set); returns the function that removes it.
   */
  onChange(listener: (group: string) => void): () => void {
    this.changeListeners.add(listener);
    return () => {
      this.changeListeners.delete(listener);
    };
  }

  /** Number of watches held for a group (tests, stats). */
  waiterCount(group: string): number {
    return this.waiters.get(group)?.size ?? 0;
  }

  /**
   * RocketMQ: scanNotActiveChannel. Evicts members silent for `channelExpiredTimeoutMs` and members whose
   * watch was not renewed in time; each eviction is announced (not for BROADCASTING groups).
   */
  scanNotActiveChannel(): void {
    const now = this.clock.now();
    for (const info of [...this.consumerTable.values()]) {
      let evicted = false;
      const states = this.watchStates.get(info.groupName);
      for (const ch of info.getChannels()) {
        const ws = states?.get(ch.clientId);
        if (ws && ws.open > 0) continue;
        let reason: EvictionReason | undefined;
        if (ws?.deadline != null && now > ws.deadline) reason = 'WATCH_NOT_RENEWED';
        else if (now - ch.lastUpdateTimestamp > this.channelExpiredTimeoutMs) reason = 'CHANNEL_EXPIRED';
        if (reason === undefined) continue;
        info.unregisterChannel(ch.clientId);
        states?.delete(ch.clientId);
        evicted = true;
        this.logger.warn(
          { group: info.groupName, clientId: ch.clientId, reason, silentMs: now - ch.lastUpdateTimestamp },
          'consumer evicted',
        );
      }
      if (!evicted) continue;
      this.removeGroupIfEmpty(info);
      if (info.messageModel !== 'BROADCASTING') this.change(info.groupName);
    }
    // Forget watch states of clients that are no member and hold no watch.
    for (const [group, states] of this.watchStates) {
      const info = this.consumerTable.get(group);
      for (const [clientId, ws] of states) if (ws.open === 0 && !info?.findChannel(clientId)) states.delete(clientId);
      if (states.size === 0) this.watchStates.delete(group);
    }
  }

  private removeGroupIfEmpty(info: ConsumerGroupInfo): void {
    if (info.size > 0 || this.consumerTable.get(info.groupName) !== info) return;
    this.consumerTable.delete(info.groupName);
    this.logger.info({ group: info.groupName }, 'no consumer left, consumer group removed');
    this.filterRegistry?.unRegister(info.groupName);
  }

  /** RocketMQ: ConsumerGroupEvent.CHANGE — the version moves and every held watch is answered. */
  private change(group: string): void {
    const version = Math.max(this.lastVersion + 1, this.clock.now());
    this.lastVersion = version;
    this.versions.set(group, version);
    this.wakeWaiters(group);
    for (const listener of this.changeListeners) {
      try {
        listener(group);
      } catch (e) {
        this.logger.error({ err: e, group }, 'consumer change listener failed');
      }
    }
  }

  private wakeWaiters(group: string): void {
    const set = this.waiters.get(group);
    if (!set) return;
    const snapshot = this.snapshot(group);
    for (const w of [...set]) w.finish({ version: snapshot.version, clientIds: [...snapshot.clientIds] });
  }

  private watchState(group: string, clientId: string): WatchState {
    let states = this.watchStates.get(group);
    if (!states) this.watchStates.set(group, (states = new Map()));
    let ws = states.get(clientId);
    if (!ws) states.set(clientId, (ws = { open: 0, deadline: null }));
    return ws;
  }

  private touch(group: string, clientId: string): void {
    const ch = this.consumerTable.get(group)?.findChannel(clientId);
    if (ch) ch.lastUpdateTimestamp = this.clock.now();
  }

  private watchBegan(group: string, clientId: string): void {
    const ws = this.watchState(group, clientId);
    ws.open += 1;
    ws.deadline = null;
    this.touch(group, clientId);
  }

  private watchEnded(group: string, clientId: string, now: number): void {
    const ws = this.watchState(group, clientId);
    ws.open = Math.max(0, ws.open - 1);
    this.touch(group, clientId);
    if (ws.open === 0) ws.deadline = now + this.watchRenewGraceMs;
  }
}
