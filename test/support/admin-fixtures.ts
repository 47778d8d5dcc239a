/**
 * Shared by the admin tests: the compiled CLI run as a user runs it, and a push consumer that counts
 * what it consumes of one topic (subscribed by tag `A`, from the first offset, committing every 100 ms).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConsumeFromWhere, MessageSelector, PushConsumer, type PushConsumerOptions } from '../../src/index.js';

const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli.js');

/** `rocketmq-ts ARGS` from dist/: its exit code and all of its output (on 'close', not 'exit'). */
export function rocketmq(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A started consumer of `topic` (tag `A`) in `group`; `consumed()` counts the messages it has handled. */
export async function countingConsumer(
  connection: Pick<PushConsumerOptions, 'endpoints' | 'namesrvAddr'>,
  group: string,
  topic: string,
): Promise<{ consumer: PushConsumer; consumed: () => number }> {
  const consumer = new PushConsumer({
    ...connection,
    consumerGroup: group,
    consumeFromWhere: ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
    persistConsumerOffsetIntervalMs: 100,
  });
  let consumed = 0;
  consumer.subscribe(topic, MessageSelector.byTag('A'));
  consumer.registerMessageListener(() => {
    consumed += 1;
  });
  await consumer.start();
  return { consumer, consumed: () => consumed };
}
