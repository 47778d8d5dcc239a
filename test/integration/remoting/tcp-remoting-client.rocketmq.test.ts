/**
 * TcpRemotingClient against a real Apache RocketMQ 4.9.8 (the shared kit): route from the NameServer,
 * send (SEND_MESSAGE and SEND_MESSAGE_V2's one-letter keys), heartbeat, consumer list, pull, max offset,
 * and the broker's NOTIFY_CONSUMER_IDS_CHANGED arriving as a server request — in both header serializations.
 */
import { decodeMessages } from '../../../src/common/codec/index.js';
import { RequestCode } from '../../../src/protocol/request-code.js';
import { ResponseCode } from '../../../src/protocol/response-code.js';
import { TcpRemotingClient } from '../../../src/remoting/tcp-remoting-client.js';
import { eventually, waitFor } from '../../support/remoting-test-server.js';
import { kitUnavailable, startKit, type RocketMQKit } from '../../support/rocketmq-kit.js';

const why = kitUnavailable();
if (why) console.log(`skipping the RocketMQ kit smoke test: ${why}`);
const describeKit = why ? describe.skip : describe;

describeKit('TcpRemotingClient against RocketMQ 4.9.8', () => {
  let kit: RocketMQKit;
  const clients: TcpRemotingClient[] = [];
  beforeAll(async () => {
    kit = await startKit();
  }, 240_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await kit?.stop();
  }, 60_000);

  const heartbeat = (clientID: string, group: string, topic: string) => ({
    code: RequestCode.HEART_BEAT,
    header: {},
    body: Buffer.from(
      JSON.stringify({
        clientID,
        producerDataSet: [],
        consumerDataSet: [
          {
            groupName: group,
            consumeType: 'CONSUME_ACTIVELY',
            messageModel: 'CLUSTERING',
            consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
            unitMode: false,
            subscriptionDataSet: [
              {
                topic,
                subString: '*',
                tagsSet: [],
                codeSet: [],
                subVersion: 0,
                expressionType: 'TAG',
                classFilterMode: false,
              },
            ],
          },
        ],
      }),
    ),
  });

  test.each(['JSON', 'ROCKETMQ'] as const)(
    '%s: route, send, heartbeat, pull, offsets, membership news',
    async (type) => {
      const opts = { timeoutMs: 10_000 };
      const a = new TcpRemotingClient({ serializeType: type });
      const b = new TcpRemotingClient({ serializeType: type });
      clients.push(a, b);
      const route = await a.invoke(
        kit.namesrvAddr,
        { code: RequestCode.GET_ROUTEINFO_BY_TOPIC, header: { topic: 'TBW102' } },
        opts,
      );
      expect(route.code).toBe(ResponseCode.SUCCESS);
      expect(JSON.parse(route.body?.toString() ?? '')).toMatchObject({
        brokerDatas: [{ brokerAddrs: { '0': kit.brokerAddr } }],
      });
      const missing = await a.invoke(
        kit.namesrvAddr,
        { code: RequestCode.GET_ROUTEINFO_BY_TOPIC, header: { topic: `None${type}` } },
        opts,
      );
      expect(missing.code).toBe(ResponseCode.TOPIC_NOT_EXIST);

      const topic = `TcpSmoke${type}${Date.now()}`;
      const group = `TcpSmokeGroup${type}${Date.now()}`;
      const sendHeader = {
        producerGroup: 'PG',
        topic,
        defaultTopic: 'TBW102',
        defaultTopicQueueNums: 4,
        queueId: 0,
        sysFlag: 0,
        bornTimestamp: Date.now(),
        flag: 0,
        properties: 'TAGS\u0001a\u0002',
        reconsumeTimes: 0,
        unitMode: false,
      };
      for (const [code, body] of [
        [RequestCode.SEND_MESSAGE, 'one'],
        [RequestCode.SEND_MESSAGE_V2, 'two'],
      ] as const) {
        const sent = await a.invoke(kit.brokerAddr, { code, header: sendHeader, body: Buffer.from(body) }, opts);
        expect(sent).toMatchObject({ code: ResponseCode.SUCCESS, header: { queueId: 0 } });
      }
      // RocketMQ: a message is counted once dispatched to the consume queue, shortly after the send.
      await eventually(
        async () =>
          (await a.invoke(kit.brokerAddr, { code: RequestCode.GET_MAX_OFFSET, header: { topic, queueId: 0 } }, opts))
            .header.offset === 2,
        10_000,
        'GET_MAX_OFFSET = 2',
      );

      const news: string[] = [];
      a.onServerRequest(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, (req) => {
        news.push(req.extFields.consumerGroup ?? '');
      });
      expect((await a.invoke(kit.brokerAddr, heartbeat(`127.0.0.1@a${type}`, group, topic), opts)).code).toBe(0);
      const list = await a.invoke(
        kit.brokerAddr,
        { code: RequestCode.GET_CONSUMER_LIST_BY_GROUP, header: { consumerGroup: group } },
        opts,
      );
      expect(JSON.parse(list.body?.toString() ?? '')).toEqual({ consumerIdList: [`127.0.0.1@a${type}`] });
      // A second member joining makes the broker notify the first, oneway, on its connection.
      await b.invoke(kit.brokerAddr, heartbeat(`127.0.0.1@b${type}`, group, topic), opts);
      await waitFor(() => news.includes(group), 10_000, 'NOTIFY_CONSUMER_IDS_CHANGED');

      const pull = await a.invoke(
        kit.brokerAddr,
        {
          code: RequestCode.PULL_MESSAGE,
          header: {
            consumerGroup: group,
            topic,
            queueId: 0,
            queueOffset: 0,
            maxMsgNums: 32,
            sysFlag: 2,
            commitOffset: 0,
            suspendTimeoutMillis: 1000,
            subVersion: 0,
            expressionType: 'TAG',
          },
        },
        opts,
      );
      expect(pull).toMatchObject({
        code: ResponseCode.SUCCESS,
        remark: 'FOUND',
        header: { nextBeginOffset: 2, maxOffset: 2 },
      });
      expect(decodeMessages(pull.body as Buffer).map((m) => m.body?.toString())).toEqual(['one', 'two']);
    },
    60_000,
  );
});
