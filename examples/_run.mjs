// Shared by the examples: where the broker is, and running `main()` when a file is started directly.
import path from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import { AdminClient } from 'rocketmq-ts';

/** The broker address: $ROCKETMQ_TS_ENDPOINTS, else the CLI broker's default http://127.0.0.1:8081. */
export const endpoints = process.env.ROCKETMQ_TS_ENDPOINTS ?? 'http://127.0.0.1:8081';

/** The NameServers of a RocketMQ cluster (example 10): $NAMESRV_ADDR, as RocketMQ's tools read it, else 127.0.0.1:9876. */
export const namesrvAddr = process.env.NAMESRV_ADDR ?? '127.0.0.1:9876';

/**
 * Runs `main(endpoints)` when `moduleUrl` is the file node was started with. A failure exits 1 with
 * one line on stderr (what failed and, for the usual causes, what to do) rather than a stack trace.
 */
export function runIfMain(moduleUrl, main) {
  if (process.argv[1] === undefined || pathToFileURL(process.argv[1]).href !== moduleUrl) return;
  main(endpoints).then(
    () => process.exit(0),
    (e) => {
      process.stderr.write(`${path.basename(process.argv[1])}: ${describeFailure(e)}\n`);
      process.exit(1);
    },
  );
}

function describeFailure(e) {
  const message = String(e?.message ?? e).split('\n')[0];
  const codes = [e?.code, e?.cause?.code, e?.cause?.cause?.code];
  if (codes.includes('ERR_TRANSPORT') || codes.includes('ERR_START_TIMEOUT') || codes.includes('ECONNREFUSED'))
    return `${message} (is a broker running? start one with: npx rocketmq-ts broker --store /tmp/rmq)`;
  if (codes.includes('ERR_TOPIC_NOT_EXIST')) return `${message} (run examples/02-produce.mjs first)`;
  return message;
}

/** Resolves when `cond()` (which may return a promise) holds; rejects after `timeoutMs`. */
export async function until(cond, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Rejects with ERR_TOPIC_NOT_EXIST when the broker has no `topic`: a push consumer would wait for it
 * to appear (as RocketMQ's does), where an example should say what to run first.
 */
export async function requireTopic(endpoints, topic) {
  const admin = new AdminClient({ endpoints });
  try {
    await admin.topicStatus(topic);
  } finally {
    await admin.shutdown();
  }
}

/**
 * Consumes until `consumer` (a started PushConsumer) has caught up: every queue it holds consumed up to
 * the broker's last offset, the messages its filter skipped included. A group that has consumed
 * everything already catches up at once.
 */
export async function untilCaughtUp(consumer, timeoutMs) {
  await consumer.ready;
  await until(async () => (await consumer.lag()).total === 0, timeoutMs, 'the consumer to catch up');
}
