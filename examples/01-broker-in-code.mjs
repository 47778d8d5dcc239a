// 01 — Start the bundled broker from code (no CLI), on a temporary store, and stop it.
// Run: node examples/01-broker-in-code.mjs
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Broker } from 'rocketmq-ts/broker';
import { runIfMain } from './_run.mjs';

export async function main() {
  const storePath = await mkdtemp(path.join(os.tmpdir(), 'rocketmq-ts-example-'));
  const broker = await Broker.start({ storePath, port: 0 }); // port 0: any free port
  console.log(`broker listening on ${broker.address}`);
  await broker.shutdown();
  await rm(storePath, { recursive: true, force: true });
  console.log('broker stopped');
  return broker.address;
}

runIfMain(import.meta.url, main);
