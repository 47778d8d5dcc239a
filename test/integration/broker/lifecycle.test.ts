/**
 * Broker.start / shutdown: one broker per store, idempotent shutdown, option errors.
 */
import { rmSync } from 'node:fs';
import { Broker } from '../../../src/broker/index.js';
import { ResponseCode } from '../../../src/protocol/index.js';
import { TestBrokerClient } from '../../support/broker-client.js';
import { tempStorePath } from '../../support/broker-fixture.js';

describe('Broker lifecycle', () => {
  test('a second broker on the same store is refused; the first keeps serving', async () => {
    const storePath = tempStorePath();
    const first = await Broker.start({ storePath, port: 0 });
    const client = new TestBrokerClient(first.address);
    try {
      await expect(Broker.start({ storePath, port: 0 })).rejects.toThrow();
      expect((await client.call('GET_MAX_OFFSET', { topic: 'T', queueId: 0 })).code).toBe(ResponseCode.SUCCESS);
    } finally {
      await first.shutdown();
      await client.close();
    }
    // the lock is released at shutdown
    const again = await Broker.start({ storePath, port: 0 });
    await again.shutdown();
    rmSync(storePath, { recursive: true, force: true });
  });

  test('shutdown is idempotent (the same promise) and Symbol.asyncDispose shuts down', async () => {
    const storePath = tempStorePath();
    const broker = await Broker.start({ storePath, port: 0 });
    const p1 = broker.shutdown();
    expect(broker.shutdown()).toBe(p1);
    await p1;
    {
      await using b2 = await Broker.start({ storePath, port: 0 });
      expect(b2.address).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    }
    const b3 = await Broker.start({ storePath, port: 0 });
    await b3.shutdown();
    rmSync(storePath, { recursive: true, force: true });
  });

  test('a bad option is refused with an error naming it', async () => {
    const storePath = tempStorePath();
    try {
      await expect(Broker.start({ storePath, port: -1 })).rejects.toThrow(/port/);
      await expect(Broker.start({ storePath, port: 0, store: { mappedFileSizeCommitLog: 10 } })).rejects.toThrow(
        /mappedFileSizeCommitLog/,
      );
    } finally {
      rmSync(storePath, { recursive: true, force: true });
    }
  });
});
