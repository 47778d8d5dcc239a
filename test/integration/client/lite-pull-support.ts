/** Helpers for the LitePullConsumer integration tests. */
import { createServer } from 'node:net';
import { LitePullConsumer } from '../../../src/client/consumer/lite/lite-pull-consumer.js';
import type { LitePullConsumerOptions } from '../../../src/client/consumer/lite/lite-pull-consumer-options.js';
import type { MessageExt } from '../../../src/common/message.js';

export function newLiteConsumer(
  endpoints: string,
  consumerGroup: string,
  extra: Partial<LitePullConsumerOptions> = {},
): LitePullConsumer {
  return new LitePullConsumer({
    endpoints,
    consumerGroup,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    pollTimeoutMs: 200,
    ...extra,
  });
}

export const bodyOf = (m: MessageExt): string => m.body?.toString() ?? '';

/** Polls until `until` holds for the bodies gathered so far or `timeoutMs` passes; returns every body polled. */
export async function pollUntil(
  c: LitePullConsumer,
  until: (bodies: string[]) => boolean,
  timeoutMs = 10_000,
  into: string[] = [],
): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  while (!until(into)) {
    if (Date.now() > deadline) throw new Error(`condition not met in time (${into.length} polled)`);
    for (const m of await c.poll({ timeoutMs: 100 })) into.push(bodyOf(m));
  }
  return into;
}

/** A port nothing listens on (taken from the OS on 127.0.0.1, then released). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}
