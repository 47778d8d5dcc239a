import { decodeMessages, encodeMessage } from '../../../src/common/codec/index.js';

describe('properties named like Object.prototype members', () => {
  it('keeps a `__proto__` property as an ordinary own property', () => {
    const properties: Record<string, string> = {};
    Object.defineProperty(properties, '__proto__', {
      value: 'x',
      enumerable: true,
      writable: true,
      configurable: true,
    });
    properties['constructor'] = 'y';
    const [m] = decodeMessages(
      encodeMessage({
        topic: 'T',
        flag: 0,
        body: Buffer.from('b'),
        properties,
        queueId: 0,
        queueOffset: 0,
        commitLogOffset: 0,
        sysFlag: 0,
        bornTimestamp: 0,
        bornHost: { ip: '127.0.0.1', port: 1 },
        storeTimestamp: 0,
        storeHost: { ip: '127.0.0.1', port: 2 },
        reconsumeTimes: 0,
        preparedTransactionOffset: 0,
      }),
    );
    expect(Object.getOwnPropertyDescriptor(m?.properties, '__proto__')?.value).toBe('x');
    expect(Object.getOwnPropertyDescriptor(m?.properties, 'constructor')?.value).toBe('y');
  });
});
