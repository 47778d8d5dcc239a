/**
 * Store recovery seen from the broker and its CLI: committed consumer offsets past a queue that
 * recovery cut short are corrected to its end (so a group does not skip the messages that reuse those
 * offsets), and every recovery action reaches the CLI's stderr as a JSON line with its figures.
 */
import fs from 'node:fs';
import path from 'node:path';
import { decodeMessages } from '../../../src/common/codec/index.js';
import type { Logger } from '../../../src/common/logger.js';
import { Broker } from '../../../src/broker/index.js';
import { ResponseCode } from '../../../src/protocol/index.js';
import { TestBrokerClient, uniqueName } from '../../support/broker-client.js';
import { tempStorePath } from '../../support/broker-fixture.js';
import { listeningAddress, runCli } from '../../support/cli-process.js';

function spyLogger(): Logger & { warnings: { msg: string; obj: Record<string, unknown> }[] } {
  const warnings: { msg: string; obj: Record<string, unknown> }[] = [];
  const push = (o: unknown, m?: string): void =>
    void warnings.push({ msg: m ?? '', obj: o as Record<string, unknown> });
  return { warnings, debug: () => {}, info: () => {}, warn: push, error: push };
}

/** Fills a store with 40 messages on queue 0, commits offset 40 for `group`, and cuts the log to 3/4. */
async function shrunkStore(storePath: string, topic: string, group: string): Promise<void> {
  const broker = await Broker.start({ port: 0, storePath });
  const client = new TestBrokerClient(broker.address);
  try {
    for (let i = 0; i < 40; i++) expect((await client.send(topic, `m${i}-${'x'.repeat(200)}`)).code).toBe(0);
    broker.consumerOffsetManager.commitOffset('test', group, topic, 0, 40);
  } finally {
    await client.close();
    await broker.shutdown();
  }
  const segment = path.join(storePath, 'commitlog', '0'.repeat(20));
  fs.truncateSync(segment, Math.floor((fs.statSync(segment).size * 3) / 4));
}

describe('store recovery through the broker', () => {
  test('committed offsets past a queue cut short are corrected to its end, and the group reads new messages', async () => {
    const storePath = tempStorePath('rmq-offsets-');
    const topic = uniqueName('T');
    const group = uniqueName('g');
    await shrunkStore(storePath, topic, group);
    const log = spyLogger();
    const broker = await Broker.start({ port: 0, storePath, logger: log });
    const client = new TestBrokerClient(broker.address);
    try {
      const max = broker.store.getMaxOffsetInQueue(topic, 0);
      expect(max).toBeLessThan(40);
      expect(broker.consumerOffsetManager.queryOffset(group, topic, 0)).toBe(max);
      expect(log.warnings.find((w) => /past the end of its queue/.test(w.msg))?.obj).toMatchObject({
        group,
        topic,
        queueId: 0,
        committed: 40,
        queueMaxOffset: max,
      });
      await client.send(topic, 'after-restart');
      const r = await client.pull({ group, topic, offset: max });
      expect(r.code).toBe(ResponseCode.SUCCESS);
      expect(decodeMessages(r.body).map((m) => m.body?.toString())).toEqual(['after-restart']);
    } finally {
      await client.close();
      await broker.shutdown();
      fs.rmSync(storePath, { recursive: true, force: true });
    }
  }, 30_000);

  test('the CLI logs recovery actions to stderr as JSON lines; --log-level silent says nothing', async () => {
    const storePath = tempStorePath('rmq-cli-log-');
    try {
      await shrunkStore(storePath, uniqueName('T'), uniqueName('g'));
      const run = async (args: string[]): Promise<string> => {
        const r = runCli(['broker', '--store', storePath, '--port', '0', ...args]);
        await listeningAddress(r);
        r.child.kill('SIGTERM');
        const code = await r.exit;
        expect(`exit ${code}: ${r.stderr().slice(-2000)}`).toMatch(/^exit 0: /);
        return r.stderr();
      };
      const lines = (await run([]))
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.find((l) => l.msg === 'consume queue: units past the commit log cut')).toMatchObject({
        level: 40,
        queueId: 0,
        unitsCut: expect.any(Number),
      });
      expect(
        lines.find((l) => l.msg === 'consumer offset past the end of its queue corrected to the end'),
      ).toMatchObject({ level: 40, committed: 40 });
      expect(lines.some((l) => l.msg === 'broker started' && l.level === 30)).toBe(true);
      const silent = await run(['--log-level', 'silent']);
      expect(silent.split('\n').filter((l) => l.startsWith('{'))).toEqual([]);
    } finally {
      fs.rmSync(storePath, { recursive: true, force: true });
    }
  }, 60_000);
});
