/** Heartbeat / watch / send-back conveniences over the test client of test/support/broker-client.ts. */
import type { CommandAnswer, TestBrokerClient } from '../../support/broker-client.js';
import { decodeMessages } from '../../../src/common/codec/index.js';
import type { MessageExt } from '../../../src/common/message.js';

export function heartbeat(
  client: TestBrokerClient,
  clientID: string,
  group: string,
  options: { topics?: string[]; messageModel?: 'CLUSTERING' | 'BROADCASTING'; producerGroup?: string } = {},
): Promise<CommandAnswer> {
  const subs = [...(options.topics ?? ['T']), `%RETRY%${group}`].map((topic) => ({
    topic,
    subString: '*',
    tagsSet: [],
    codeSet: [],
    subVersion: 1,
    expressionType: 'TAG',
    classFilterMode: false,
  }));
  const body = {
    clientID,
    consumerDataSet: [
      {
        groupName: group,
        consumeType: 'CONSUME_PASSIVELY',
        messageModel: options.messageModel ?? 'CLUSTERING',
        consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
        subscriptionDataSet: subs,
        unitMode: false,
      },
    ],
    producerDataSet: options.producerGroup ? [{ groupName: options.producerGroup }] : [],
  };
  return client.call('HEART_BEAT', {}, Buffer.from(JSON.stringify(body)));
}

export interface WatchAnswer {
  code: number;
  version: number;
  ids: string[];
}

export async function watch(
  client: TestBrokerClient,
  group: string,
  clientID: string,
  version: number,
  timeoutMillis = 30_000,
  signal?: AbortSignal,
): Promise<WatchAnswer> {
  const a = await client.call(
    'WATCH_CONSUMER_IDS',
    { consumerGroup: group, clientID, version, timeoutMillis },
    undefined,
    signal ? { signal } : {},
  );
  const ids =
    a.body.length > 0 ? (JSON.parse(a.body.toString('utf8')) as { consumerIdList: string[] }).consumerIdList : [];
  return { code: a.code, version: Number(a.header.version), ids };
}

export async function consumerList(
  client: TestBrokerClient,
  group: string,
): Promise<{ code: number; remark?: string; ids: string[] }> {
  const a = await client.call('GET_CONSUMER_LIST_BY_GROUP', { consumerGroup: group });
  const ids = a.code === 0 ? (JSON.parse(a.body.toString('utf8')) as { consumerIdList: string[] }).consumerIdList : [];
  return { code: a.code, ...(a.remark === undefined ? {} : { remark: a.remark }), ids };
}

export function sendBack(
  client: TestBrokerClient,
  header: {
    offset: number;
    group: string;
    delayLevel: number;
    maxReconsumeTimes?: number;
    originMsgId?: string;
    originTopic?: string;
  },
): Promise<CommandAnswer> {
  return client.call('CONSUMER_SEND_MSG_BACK', header);
}

/** Pulls `topic` queue `queueId` from `offset` until at least one message comes, or throws after `timeoutMs`. */
export async function pullUntilFound(
  client: TestBrokerClient,
  group: string,
  topic: string,
  offset: number,
  timeoutMs = 10_000,
  queueId = 0,
): Promise<{ messages: MessageExt[]; next: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const a = await client.pull({ group, topic, queueId, offset, suspend: true, suspendTimeoutMillis: 1000 });
    if (a.code === 0) return { messages: decodeMessages(a.body), next: Number(a.header.nextBeginOffset) };
    if (Date.now() > deadline)
      throw new Error(`nothing on ${topic} from ${offset}: last code ${a.code} ${a.remark ?? ''}`);
    if (a.code !== 19 && a.code !== 20 && a.code !== 21) await new Promise((r) => setTimeout(r, 50));
  }
}
