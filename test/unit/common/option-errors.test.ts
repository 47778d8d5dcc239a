import { InvalidArgumentError, Producer, PushConsumer, PullConsumer } from '../../../src/index.js';
import { resolveBrokerOptions } from '../../../src/broker/index.js';
import { jest } from '@jest/globals';
import { z } from 'zod';
import { COMPILE_AFTER_PARSES, ONE_SHOT, tieredSafeParse } from '../../../src/common/option-errors.js';

const endpoints = 'http://127.0.0.1:1';

function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidArgumentError);
    return (e as InvalidArgumentError).field;
  }
  return undefined;
}

describe('options: a misspelt or unknown option is refused, naming it', () => {
  it.each([
    ['PushConsumer', () => new PushConsumer({ consumerGroup: 'g', endpoints, pullBatchSise: 10 } as never)],
    ['PullConsumer', () => new PullConsumer({ consumerGroup: 'g', endpoints, timeoutMS: 1 } as never)],
    ['Producer', () => new Producer({ producerGroup: 'p', endpoints, retryTimes: 1 } as never)],
    ['Broker', () => resolveBrokerOptions({ storePath: '/tmp/x', prot: 1 } as never)],
  ])('%s', (_name, make) => {
    expect(fieldOf(make)).toMatch(/^(pullBatchSise|timeoutMS|retryTimes|prot)$/);
  });

  it('names a bad value of a known option', () => {
    expect(fieldOf(() => new PushConsumer({ consumerGroup: 'g', endpoints, pullBatchSize: 0 }))).toBe('pullBatchSize');
  });
});

describe('tieredSafeParse', () => {
  it("parses without zod's compiled path for a schema's first parses, with it after, to the same results", () => {
    const schema = z.object({ name: z.string().min(1), n: z.number().int().default(3) });
    const spy = jest.spyOn(schema, 'safeParse');
    const results = [];
    for (let i = 0; i < COMPILE_AFTER_PARSES + 2; i++)
      results.push(tieredSafeParse(schema, i % 2 ? { name: 'a' } : { name: '' }));
    expect(spy.mock.calls.slice(0, COMPILE_AFTER_PARSES).every((c) => c[1] === ONE_SHOT)).toBe(true);
    expect(spy.mock.calls.slice(COMPILE_AFTER_PARSES).map((c) => c[1])).toEqual([undefined, undefined]);
    const [jitless, compiled] = [results.slice(0, 2), results.slice(COMPILE_AFTER_PARSES, COMPILE_AFTER_PARSES + 2)];
    expect(compiled.map((r) => [r.success, r.data])).toEqual(jitless.map((r) => [r.success, r.data]));
    expect(results[1]).toEqual({ success: true, data: { name: 'a', n: 3 } });
    expect(results[0]?.success).toBe(false);
    // Another schema starts from its own count.
    const other = z.object({ x: z.boolean() });
    const otherSpy = jest.spyOn(other, 'safeParse');
    tieredSafeParse(other, { x: true });
    expect(otherSpy.mock.calls[0]?.[1]).toBe(ONE_SHOT);
  });
});
