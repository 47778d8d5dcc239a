import { InvalidArgumentError, Producer, PullConsumer } from '../../../../src/index.js';
import { resolveProducerOptions } from '../../../../src/client/producer/producer-options.js';
import { resolvePullConsumerOptions } from '../../../../src/client/consumer/pull/pull-consumer-options.js';
import { buildClientId } from '../../../../src/client/instance/client-options.js';

const E = 'http://127.0.0.1:8081';

function errorOf(fn: () => unknown): InvalidArgumentError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidArgumentError);
    return e as InvalidArgumentError;
  }
  throw new Error('expected an InvalidArgumentError');
}

describe('bad options are rejected at construction with an error naming the option', () => {
  test.each([
    ['endpoints', () => new Producer({} as never)],
    ['endpoints', () => new Producer({ endpoints: 'localhost:8081' })],
    ['endpoints', () => new Producer({ endpoints: [] })],
    ['endpoints.1', () => new Producer({ endpoints: [E, 'ftp://x'] })],
    ['sendMsgTimeoutMs', () => new Producer({ endpoints: E, sendMsgTimeoutMs: -1 })],
    ['retryTimesWhenSendFailed', () => new Producer({ endpoints: E, retryTimesWhenSendFailed: 1.5 })],
    ['producerGroup', () => new Producer({ endpoints: E, producerGroup: 'bad group!' })],
    ['heartbeatBrokerIntervalMs', () => new Producer({ endpoints: E, heartbeatBrokerIntervalMs: '30s' as never })],
    ['connectionsPerBroker', () => new Producer({ endpoints: E, connectionsPerBroker: 0 })],
    ['logger', () => new Producer({ endpoints: E, logger: {} as never })],
    ['instanceName', () => new Producer({ endpoints: E, instanceName: 'a@b' })],
    ['consumerGroup', () => new PullConsumer({ endpoints: E } as never)],
    ['consumerGroup', () => new PullConsumer({ endpoints: E, consumerGroup: '' })],
    ['messageModel', () => new PullConsumer({ endpoints: E, consumerGroup: 'g', messageModel: 'FANOUT' as never })],
    ['consumerPullTimeoutMs', () => new PullConsumer({ endpoints: E, consumerGroup: 'g', consumerPullTimeoutMs: 0 })],
    ['options', () => new PullConsumer(undefined as never)],
    ['namesrvAddr', () => new Producer({ endpoints: E, namesrvAddr: '127.0.0.1:9876' })],
    ['namesrvAddr', () => new Producer({ namesrvAddr: '' })],
    ['namesrvAddr', () => new Producer({ namesrvAddr: ';' })],
    ['namesrvAddr', () => new Producer({ namesrvAddr: 'http://127.0.0.1:9876' })],
    ['namesrvAddr', () => new Producer({ namesrvAddr: '127.0.0.1:9876;127.0.0.1' })],
    ['namesrvAddr', () => new Producer({ namesrvAddr: 'host:99999' })],
    ['namesrvAddr.1', () => new Producer({ namesrvAddr: ['127.0.0.1:9876', 'bad host:1'] })],
    ['namesrvAddr', () => new PullConsumer({ namesrvAddr: [], consumerGroup: 'g' })],
  ])('%s', (field, make) => {
    const e = errorOf(make);
    expect(e.field).toBe(field);
    expect(e.code).toBe('ERR_INVALID_ARGUMENT');
    expect(e.message).toContain(field);
  });

  test('RocketMQ: the client timeout of a held pull must exceed the broker suspend time', () => {
    const e = errorOf(
      () =>
        new PullConsumer({
          endpoints: E,
          consumerGroup: 'g',
          brokerSuspendMaxTimeMs: 20_000,
          consumerTimeoutMsWhenSuspend: 20_000,
        }),
    );
    expect(e.field).toBe('consumerTimeoutMsWhenSuspend');
    expect(e.message).toMatch(/brokerSuspendMaxTimeMs/);
  });
});

describe('namesrvAddr', () => {
  test("RocketMQ's 'host:port;host:port' form, or an array; the error names the bad address", () => {
    const o = resolveProducerOptions({ namesrvAddr: ' 127.0.0.1:9876; ns2.example:9877;' });
    expect(o.namesrvAddr).toEqual(['127.0.0.1:9876', 'ns2.example:9877']);
    expect(o.endpoints).toEqual([]);
    const p = resolvePullConsumerOptions({ namesrvAddr: ['[::1]:9876', '10.0.0.2:9876'], consumerGroup: 'g' });
    expect(p.namesrvAddr).toEqual(['[::1]:9876', '10.0.0.2:9876']);
    expect(errorOf(() => new Producer({ namesrvAddr: '127.0.0.1:9876;nohost' })).message).toContain(
      "bad address 'nohost'",
    );
    expect(errorOf(() => new Producer({})).message).toMatch(/endpoints .* or namesrvAddr/);
    expect(resolveProducerOptions({ endpoints: E }).namesrvAddr).toEqual([]);
  });
});

describe('defaults as RocketMQ', () => {
  test('producer', () => {
    const o = resolveProducerOptions({ endpoints: `${E}/` });
    expect(o.endpoints).toEqual([E]);
    expect(o.producerGroup).toBe('DEFAULT_PRODUCER');
    expect(o.sendMsgTimeoutMs).toBe(3000);
    expect(o.retryTimesWhenSendFailed).toBe(2);
    expect(o.compressMsgBodyOverBytes).toBe(4096);
    expect(o.maxMessageSizeBytes).toBe(4 * 1024 * 1024);
    expect(o.pollNameServerIntervalMs).toBe(30_000);
    expect(o.heartbeatBrokerIntervalMs).toBe(30_000);
    expect(o.persistConsumerOffsetIntervalMs).toBe(5_000);
    expect(o.requestTimeoutMs).toBe(3000);
    expect(o.connectionsPerBroker).toBe(64);
    expect(Object.isFrozen(o)).toBe(true);
  });

  test('pull consumer', () => {
    const o = resolvePullConsumerOptions({ endpoints: [E, E], consumerGroup: 'g' });
    expect(o.endpoints).toEqual([E]);
    expect(o.brokerSuspendMaxTimeMs).toBe(20_000);
    expect(o.consumerTimeoutMsWhenSuspend).toBe(30_000);
    expect(o.consumerPullTimeoutMs).toBe(10_000);
    expect(o.messageModel).toBe('CLUSTERING');
  });

  test('RocketMQ: instanceName DEFAULT becomes pid#nanotime for producers and CLUSTERING consumers', () => {
    const a = resolveProducerOptions({ endpoints: E });
    const b = resolveProducerOptions({ endpoints: E });
    expect(a.instanceName).toMatch(new RegExp(`^${process.pid}#\\d+$`));
    expect(a.instanceName).not.toBe(b.instanceName);
    expect(resolveProducerOptions({ endpoints: E, instanceName: 'mine' }).instanceName).toBe('mine');
    expect(
      resolvePullConsumerOptions({ endpoints: E, consumerGroup: 'g', messageModel: 'BROADCASTING' }).instanceName,
    ).toBe('DEFAULT');
  });

  test('client id is clientIP@instanceName', () => {
    const o = resolveProducerOptions({ endpoints: E, clientIP: '10.0.0.5', instanceName: 'x' });
    expect(buildClientId(o)).toBe('10.0.0.5@x');
    expect(resolveProducerOptions({ endpoints: E }).clientIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  });
});
