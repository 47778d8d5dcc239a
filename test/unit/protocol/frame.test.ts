import fc from 'fast-check';
import { DecodeError } from '../../../src/common/errors.js';
import {
  COMMANDS,
  COMMANDS_BY_NAME,
  PullMessageRequestHeader,
  RequestCode,
  ResponseCode,
  decodeFrame,
  describeZodError,
  encodeFrame,
  errorFromResponse,
  requestCodeName,
} from '../../../src/protocol/index.js';

describe('HTTP command frame', () => {
  it('round-trips a header and a binary body', () => {
    const body = Buffer.from([0, 1, 2, 255]);
    const frame = decodeFrame(encodeFrame({ topic: 'T', queueId: 3 }, body));
    expect(frame.header).toEqual({ topic: 'T', queueId: 3 });
    expect(frame.body).toEqual(body);
  });

  it('has no body when none was given', () => {
    expect(decodeFrame(encodeFrame({ a: 1 })).body).toBeUndefined();
  });

  it.each([
    ['too short', Buffer.from([0, 0])],
    ['header length past the end', Buffer.from([0, 0, 0, 10, 0x7b])],
    ['header length over the limit', Buffer.from([0x7f, 0xff, 0xff, 0xff])],
    ['header not JSON', Buffer.concat([Buffer.from([0, 0, 0, 3]), Buffer.from('{x}')])],
  ])('rejects a malformed frame (%s) with a DecodeError', (_name, buf) => {
    expect(() => decodeFrame(buf)).toThrow(DecodeError);
  });

  it('never throws anything but DecodeError on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        try {
          decodeFrame(Buffer.from(bytes));
        } catch (e) {
          expect(e).toBeInstanceOf(DecodeError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('command schemas', () => {
  const valid = {
    consumerGroup: 'g',
    topic: 'T',
    queueId: 0,
    queueOffset: 0,
    maxMsgNums: 32,
    sysFlag: 2,
    commitOffset: 0,
    suspendTimeoutMillis: 15000,
    subVersion: 0,
  };

  it('accepts a pull header as the Java client fills it', () => {
    expect(PullMessageRequestHeader.parse({ ...valid, expressionType: 'TAG', maxMsgBytes: 262144 })).toMatchObject(
      valid,
    );
  });

  it('refuses a 64-bit value past 2^53 instead of rounding it, naming the field', () => {
    const r = PullMessageRequestHeader.safeParse({ ...valid, queueOffset: 2 ** 60 });
    expect(r.success).toBe(false);
    if (!r.success) expect(describeZodError(r.error).field).toBe('queueOffset');
  });

  it('names a missing field', () => {
    const { queueId: _q, ...rest } = valid;
    const r = PullMessageRequestHeader.safeParse(rest);
    expect(r.success).toBe(false);
    if (!r.success) expect(describeZodError(r.error).field).toBe('queueId');
  });

  it('registers every command under its RocketMQ code and name', () => {
    for (const [code, spec] of COMMANDS) {
      expect(spec.code).toBe(code);
      expect(COMMANDS_BY_NAME.get(spec.name)).toBe(spec);
      expect(requestCodeName(code)).toBe(spec.name);
    }
    expect(COMMANDS.get(RequestCode.PULL_MESSAGE)?.name).toBe('PULL_MESSAGE');
  });
});

describe('response code → error', () => {
  it('names the code and keeps the number and remark', () => {
    const e = errorFromResponse(ResponseCode.TOPIC_NOT_EXIST, 'topic[T] not exist');
    expect(e.code).toBe('ERR_TOPIC_NOT_EXIST');
    expect(e.responseCode).toBe(17);
    expect(e.retriable).toBe(false);
    expect(e.message).toContain('topic[T] not exist');
  });

  it('marks transient broker states retriable', () => {
    expect(errorFromResponse(ResponseCode.SUBSCRIPTION_NOT_LATEST).retriable).toBe(true);
    expect(errorFromResponse(ResponseCode.SYSTEM_BUSY).retriable).toBe(true);
  });
});
