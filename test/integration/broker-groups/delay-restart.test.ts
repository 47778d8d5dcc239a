import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Broker } from '../../../src/broker/index.js';
import { TestBrokerClient, uniqueName } from '../../support/broker-client.js';
import { tempStorePath } from '../../support/broker-fixture.js';
import { pullUntilFound } from './group-client.js';

const storePath = tempStorePath('rmq-delay-restart-');
const open: { broker: Broker; client: TestBrokerClient }[] = [];

async function start(): Promise<{ broker: Broker; client: TestBrokerClient }> {
  const broker = await Broker.start({ storePath, port: 0, store: { messageDelayLevel: '1s 2s' } });
  const client = new TestBrokerClient(broker.address);
  const b = { broker, client };
  open.push(b);
  return b;
}

async function stop(b: { broker: Broker; client: TestBrokerClient }): Promise<void> {
  await b.client.close();
  await b.broker.shutdown();
  open.splice(open.indexOf(b), 1);
}

afterAll(async () => {
  for (const b of [...open]) await stop(b);
  rmSync(storePath, { recursive: true, force: true });
});

describe('delay levels through SEND_MESSAGE and a broker restart', () => {
  test('a message sent with DELAY survives a broker restart and is delivered exactly once', async () => {
    const topic = uniqueName('T');
    const group = uniqueName('G');
    const first = await start();
    const sent = await first.client.send(topic, 'delayed', { properties: { DELAY: '2' } });
    expect(sent.code).toBe(0);
    const early = await first.client.pull({ group, topic, offset: 0 });
    expect(early.code).not.toBe(0); // nothing on the real topic yet
    await stop(first);
    const saved = JSON.parse(readFileSync(path.join(storePath, 'config', 'delayOffset.json'), 'utf8'));
    expect(saved.offsetTable['2']).toBe(0); // not delivered before the restart

    const second = await start();
    const { messages, next } = await pullUntilFound(second.client, group, topic, 0, 10_000);
    expect(messages.map((m) => m.body?.toString())).toEqual(['delayed']);
    // RocketMQ 4.9.8 keeps DELAY on the delivered message: ScheduleMessageService.messageTimeup writes
    // the properties string before it clears the property.
    expect(messages[0]?.properties?.DELAY).toBe('2');
    expect(messages[0]?.properties?.REAL_TOPIC).toBe(topic);
    // and only once, also after another restart
    await stop(second);
    const third = await start();
    await new Promise((r) => setTimeout(r, 2500));
    const again = await third.client.pull({ group, topic, offset: next });
    expect(again.code).toBe(19); // PULL_NOT_FOUND: no second copy
    expect(third.broker.store.getMaxOffsetInQueue(topic, 0)).toBe(1);
  }, 20_000);
});
