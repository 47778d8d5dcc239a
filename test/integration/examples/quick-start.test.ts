import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Broker } from '../../../src/broker/index.js';
import { main } from '../../../examples/quick-start.js';

describe('examples/quick-start', () => {
  let broker: Broker;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rmq-example-'));
    broker = await Broker.start({ storePath: dir, port: 0 });
  });

  afterAll(async () => {
    await broker.shutdown();
    await rm(dir, { recursive: true, force: true });
  });

  it('delivers exactly the Paid messages to the push consumer', async () => {
    const lines: string[] = [];
    const received = await main(broker.address, { count: 10, log: (l) => lines.push(l) });
    const keys = received.map((m) => m.properties?.KEYS).sort();
    expect(keys).toEqual(['order-0', 'order-2', 'order-4', 'order-6', 'order-8']);
    expect(received.every((m) => m.properties?.TAGS === 'Paid')).toBe(true);
    expect(lines.filter((l) => l.startsWith('sent '))).toHaveLength(10);
  });
});
