import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { heartbeat, watch } from './group-client.js';

const here = path.dirname(fileURLToPath(import.meta.url));
let fx: BrokerFixture;
const children: ChildProcess[] = [];

beforeAll(async () => {
  // RocketMQ's 120 s expiry: only the watch rule can evict within this test.
  fx = await startBroker({ watchRenewGraceMs: 1000 });
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await fx.close();
});

function startMember(group: string, clientID: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(here, 'watch-child.mjs'), fx.broker.address, group, clientID], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('watching')) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`member exited early (${code})`)));
  });
}

describe('a killed consumer process', () => {
  test('is evicted within the watch grace time and the others hear of it at once', async () => {
    const group = uniqueName('G');
    await heartbeat(fx.client, 'survivor', group, { topics: [] });
    const victim = await startMember(group, 'victim');
    await waitFor(() => fx.broker.consumerManager.getConsumerGroupInfo(group)?.getAllClientIds().length === 2);
    const known = await watch(fx.client, group, 'survivor', -1);
    expect(known.ids).toEqual(['survivor', 'victim']);
    const held = watch(fx.client, group, 'survivor', known.version, 60_000);
    const t0 = Date.now();
    victim.kill('SIGKILL');
    const news = await held;
    expect(news.ids).toEqual(['survivor']);
    expect(Date.now() - t0).toBeLessThan(10_000); // grace 1 s + scan 1 s, far below the 120 s expiry
  }, 20_000);
});
