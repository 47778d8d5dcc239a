/**
 * Our clients' message trace on RocketMQ 4.9.8 and 5.3.3 (each kit's broker started with
 * traceTopicEnable=true): our producer, push consumer and lite pull consumer with enableMsgTrace send
 * their records to the kit's RMQ_SYS_TRACE_TOPIC, and that kit's own `mqadmin queryMsgTraceById`
 * (TraceDataEncoder, TraceView) decodes and prints them. One kit cluster per kit version; each version
 * skips with one line without its kit or Java.
 */
import { LitePullConsumer, Producer, PushConsumer, type MsgTraceView } from '../../../src/index.js';
import { AdminClient } from '../../../src/client/admin/admin-client.js';
import { kitDescribeEach, startKit, type RocketMQKit } from '../../support/rocketmq-kit.js';
import { uniqueName } from '../../support/broker-client.js';
import { waitFor } from '../../support/broker-fixture.js';

kitDescribeEach(
  (release) => `message trace of our clients on RocketMQ ${release}`,
  (version) => {
    let kit: RocketMQKit;

    beforeAll(async () => {
      kit = await startKit({ version, brokerExtraConf: ['traceTopicEnable=true'] });
    }, 180_000);
    afterAll(async () => {
      await kit?.stop();
    }, 60_000);

    test('mqadmin queryMsgTraceById shows our Pub row and our consumers’ Sub rows', async () => {
      const topic = uniqueName('TraceInterop');
      await kit.createTopic(topic, 2);
      const pg = uniqueName('trace_p');
      const pushGroup = uniqueName('trace_push');
      const liteGroup = uniqueName('trace_lite');
      const namesrvAddr = kit.namesrvAddr;
      const producer = new Producer({ producerGroup: pg, namesrvAddr, enableMsgTrace: true });
      const push = new PushConsumer({
        consumerGroup: pushGroup,
        namesrvAddr,
        enableMsgTrace: true,
        consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
      });
      const lite = new LitePullConsumer({
        consumerGroup: liteGroup,
        namesrvAddr,
        enableMsgTrace: true,
        consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
      });
      const admin = new AdminClient({ namesrvAddr: [namesrvAddr] });
      try {
        await producer.start();
        const sent = await producer.send({ topic, tags: 'TagA', keys: 'interop-key', body: Buffer.from('traced') });
        const pushed = new Set<string>();
        push.subscribe(topic, '*');
        push.registerMessageListener(async (msgs) => {
          for (const m of msgs) pushed.add(m.msgId);
        });
        await push.start();
        lite.subscribe(topic, '*');
        await lite.start();
        let polled = false;
        await waitFor(async () => {
          for (const m of await lite.poll({ timeoutMs: 500 })) if (m.msgId === sent.msgId) polled = true;
          return polled && pushed.has(sent.msgId);
        }, 60_000);

        // Our decoder reads what the kit's broker stored, before mqadmin is asked.
        let views: MsgTraceView[] = [];
        await waitFor(async () => {
          views = await admin.queryMsgTraceById(sent.msgId);
          const after = new Set(views.filter((v) => v.type === 'SubAfter').map((v) => v.groupName));
          return views.some((v) => v.type === 'Pub') && after.has(pushGroup) && after.has(liteGroup);
        }, 60_000);

        const out = await kit.mqadmin('queryMsgTraceById', '-n', namesrvAddr, '-i', sent.msgId);
        expect(out).toMatch(/^#Type +#ProducerGroup +#ClientHost +#SendTime +#CostTimes +#Status/m);
        expect(out).toMatch(
          new RegExp(`^Pub +${pg} +\\S+ +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d +\\d+ms +success`, 'm'),
        );
        expect(out).toMatch(/^#Type +#ConsumerGroup +#ClientHost +#ConsumerTime +#CostTimes +#Status/m);
        for (const g of [pushGroup, liteGroup])
          expect(out).toMatch(new RegExp(`^Sub +${g} +\\S+ +\\S+ \\S+ +\\d+ms +success`, 'm'));
        for (const c of [producer, push, lite]) expect(c.traceStats()?.dropped).toBe(0);
      } finally {
        await Promise.allSettled([push.shutdown(), lite.shutdown()]);
        await producer.shutdown();
        await admin.shutdown();
      }
    }, 180_000);
  },
);
