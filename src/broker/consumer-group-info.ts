/**
 * A consumer group's live state as heartbeats register it (RocketMQ's ConsumerGroupInfo): the members
 * (one entry per client id, where RocketMQ keeps one per channel), the group's subscription table (one
 * SubscriptionData per topic, shared by the whole group: the last heartbeat with a newer subVersion wins),
 * and the consume type / message model / consume-from-where of the latest heartbeat.
 * @pure
 */
import type { BrokerSubscriptionData, ConsumerGroupInfoApi } from './broker-context.js';

export type ConsumeType = ConsumerGroupInfoApi['consumeType'];
export type MessageModel = ConsumerGroupInfoApi['messageModel'];

/** One member of a group (RocketMQ's ClientChannelInfo, keyed by client id: HTTP has no channel). */
export interface ClientChannelInfo {
  readonly clientId: string;
  /** `ip:port` the last heartbeat came from. */
  remoteAddress: string;
  /** When the client last showed it is alive (heartbeat, or a watch call held or ended), ms. */
  lastUpdateTimestamp: number;
}

export class ConsumerGroupInfo implements ConsumerGroupInfoApi {
  readonly groupName: string;
  consumeType: ConsumeType;
  messageModel: MessageModel;
  consumeFromWhere: string;
  lastUpdateTimestamp = 0;
  /** Insertion (join) order, so `getAllClientIds` is stable; clients sort it themselves. */
  private readonly channels = new Map<string, ClientChannelInfo>();
  private readonly subscriptionTable = new Map<string, BrokerSubscriptionData>();

  constructor(groupName: string, consumeType: ConsumeType, messageModel: MessageModel, consumeFromWhere: string) {
    this.groupName = groupName;
    this.consumeType = consumeType;
    this.messageModel = messageModel;
    this.consumeFromWhere = consumeFromWhere;
  }

  findSubscriptionData(topic: string): BrokerSubscriptionData | undefined {
    return this.subscriptionTable.get(topic);
  }

  getSubscribeTopics(): string[] {
    return [...this.subscriptionTable.keys()];
  }

  getSubscriptions(): BrokerSubscriptionData[] {
    return [...this.subscriptionTable.values()];
  }

  /** Client ids of the members, in join order (RocketMQ returns them unsorted too). */
  getAllClientIds(): string[] {
    return [...this.channels.keys()];
  }

  getChannels(): ClientChannelInfo[] {
    return [...this.channels.values()];
  }

  findChannel(clientId: string): ClientChannelInfo | undefined {
    return this.channels.get(clientId);
  }

  get size(): number {
    return this.channels.size;
  }

  /**
   * RocketMQ: ConsumerGroupInfo.updateChannel — takes the heartbeat's consume type, model and
   * consume-from-where, adds the client when new, renews its timestamp. True when the client is new.
   */
  updateChannel(
    clientId: string,
    remoteAddress: string,
    consumeType: ConsumeType,
    messageModel: MessageModel,
    consumeFromWhere: string,
    now: number,
  ): boolean {
    this.consumeType = consumeType;
    this.messageModel = messageModel;
    this.consumeFromWhere = consumeFromWhere;
    let info = this.channels.get(clientId);
    const added = info === undefined;
    if (!info) {
      info = { clientId, remoteAddress, lastUpdateTimestamp: now };
      this.channels.set(clientId, info);
    }
    info.remoteAddress = remoteAddress;
    info.lastUpdateTimestamp = now;
    this.lastUpdateTimestamp = now;
    return added;
  }

  /**
   * RocketMQ: ConsumerGroupInfo.updateSubscription — a topic new to the group is added, a known topic is
   * replaced only by a newer subVersion, topics absent from `subList` are removed. True when the set of
   * topics changed (added or removed); a changed expression of a known topic is not a change here.
   */
  updateSubscription(subList: readonly BrokerSubscriptionData[], now: number): boolean {
    let updated = false;
    const topics = new Set<string>();
    for (const sub of subList) {
      const old = this.subscriptionTable.get(sub.topic);
      if (old === undefined) {
        this.subscriptionTable.set(sub.topic, sub);
        updated = true;
      } else if (sub.subVersion > old.subVersion) {
        this.subscriptionTable.set(sub.topic, sub);
      }
      topics.add(sub.topic);
    }
    for (const topic of [...this.subscriptionTable.keys()]) {
      if (!topics.has(topic)) {
        this.subscriptionTable.delete(topic);
        updated = true;
      }
    }
    this.lastUpdateTimestamp = now;
    return updated;
  }

  /** Removes a member; returns it when it was there. */
  unregisterChannel(clientId: string): ClientChannelInfo | undefined {
    const info = this.channels.get(clientId);
    if (info) this.channels.delete(clientId);
    return info;
  }
}
