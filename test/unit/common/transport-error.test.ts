import { RocketMQError, TransportError } from '../../../src/common/errors.js';

/** RocketMQ's client-side RPC_TIME_OUT (RemotingSysResponseCode). */
const RPC_TIME_OUT = -1006;

describe('TransportError: the code says what the caller says happened', () => {
  it('a timeout is ERR_TIMEOUT, with or without a response code', () => {
    const plain = new TransportError('PULL_MESSAGE timed out after 100 ms', { timeout: true });
    expect(plain.code).toBe('ERR_TIMEOUT');
    expect(plain.responseCode).toBeUndefined();
    const coded = new TransportError('PULL_MESSAGE timed out after 100 ms', {
      timeout: true,
      responseCode: RPC_TIME_OUT,
    });
    expect(coded.code).toBe('ERR_TIMEOUT');
    expect(coded.responseCode).toBe(RPC_TIME_OUT);
  });

  it('anything else is ERR_TRANSPORT, also when a response code is passed along', () => {
    expect(new TransportError('connection refused').code).toBe('ERR_TRANSPORT');
    const coded = new TransportError('the server answered HTTP 502', { responseCode: 502 });
    expect(coded.code).toBe('ERR_TRANSPORT');
    expect(coded.responseCode).toBe(502);
  });

  it('is retriable by default and keeps its cause', () => {
    const cause = new Error('ECONNRESET');
    const e = new TransportError('connection lost', { cause });
    expect(e).toBeInstanceOf(RocketMQError);
    expect(e.retriable).toBe(true);
    expect(e.cause).toBe(cause);
    expect(new TransportError('refused', { retriable: false }).retriable).toBe(false);
  });
});
