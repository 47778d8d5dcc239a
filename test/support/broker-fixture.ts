/**
 * Starts an in-process broker on a random port with a temp store, and cleans both up.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Broker, type BrokerOptions } from '../../src/broker/index.js';
import { TestBrokerClient } from './broker-client.js';

export interface BrokerFixture {
  broker: Broker;
  client: TestBrokerClient;
  storePath: string;
  /** Shuts the broker down, closes the client and removes the store. */
  close(): Promise<void>;
}

export function tempStorePath(prefix = 'rmq-broker-'): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

export async function startBroker(
  options: Partial<BrokerOptions> = {},
  clientOptions: { token?: string } = {},
): Promise<BrokerFixture> {
  const storePath = options.storePath ?? tempStorePath();
  const broker = await Broker.start({ port: 0, ...options, storePath });
  const client = new TestBrokerClient(broker.address, clientOptions);
  return {
    broker,
    client,
    storePath,
    async close() {
      await broker.shutdown();
      await client.close().catch(() => undefined);
      rmSync(storePath, { recursive: true, force: true });
    },
  };
}

/** Polls `cond` every few ms until it holds or `timeoutMs` passes. */
export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}
