import { InvalidArgumentError, Producer, PushConsumer, PullConsumer } from '../../../src/index.js';
import { resolveBrokerOptions } from '../../../src/broker/index.js';

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
