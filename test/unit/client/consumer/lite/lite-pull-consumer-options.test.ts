import { InvalidArgumentError } from '../../../../../src/common/errors.js';
import {
  DEFAULT_LITE_PULL_CONSUMER_OPTIONS,
  resolveLitePullConsumerOptions,
} from '../../../../../src/client/consumer/lite/lite-pull-consumer-options.js';
import { DEFAULT_PUSH_CONSUMER_OPTIONS } from '../../../../../src/client/consumer/push/push-consumer-options.js';

const base = { endpoints: 'http://127.0.0.1:1', consumerGroup: 'g' };

describe('LitePullConsumer options: startTimeoutMs', () => {
  it("defaults to the PushConsumer's start timeout", () => {
    expect(DEFAULT_LITE_PULL_CONSUMER_OPTIONS.startTimeoutMs).toBe(DEFAULT_PUSH_CONSUMER_OPTIONS.startTimeoutMs);
    expect(resolveLitePullConsumerOptions(base).startTimeoutMs).toBe(DEFAULT_PUSH_CONSUMER_OPTIONS.startTimeoutMs);
    expect(resolveLitePullConsumerOptions({ ...base, startTimeoutMs: 250 }).startTimeoutMs).toBe(250);
  });

  it.each([0, -1, 1.5, Number.NaN, 3_600_001])('rejects %p, naming the option', (startTimeoutMs) => {
    let err: unknown;
    try {
      resolveLitePullConsumerOptions({ ...base, startTimeoutMs });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as InvalidArgumentError).field).toBe('startTimeoutMs');
  });
});
