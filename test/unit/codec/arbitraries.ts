import fc from 'fast-check';
import type { EncodableMessage } from '../../../src/common/codec/index.js';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** Any UTF-16 code unit, lone surrogates included. */
const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));

export const host = fc.record({
  ip: fc.oneof(fc.ipV4(), fc.ipV6(), fc.constantFrom('::1', '::ffff:10.0.0.1', '0.0.0.0', 'fe80::1')),
  port: fc.integer({ min: 0, max: 65535 }),
});

export const long = fc.oneof(
  fc.integer({ min: -MAX_SAFE, max: MAX_SAFE }),
  fc.constantFrom(0, -1, MAX_SAFE, -MAX_SAFE, 2 ** 32, 2 ** 32 - 1, -(2 ** 32)),
);
export const int32 = fc.integer({ min: -2147483648, max: 2147483647 });

/** Property names that survive a round trip: non-empty, no 0x01/0x02, no lone surrogates. */
const propKey = fc
  .string({
    unit: fc.oneof(
      fc.constantFrom('T', 'A', 'G', 'S', '_', 'k'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    ),
    minLength: 1,
    maxLength: 12,
  })
  .filter((k) => !k.includes('\u0001') && !k.includes('\u0002'));
/** Values: non-empty, no 0x02 (0x01 is allowed inside a value), lone surrogates allowed. */
const propValue = fc
  .string({
    unit: fc.oneof(anyUnit, fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
    minLength: 1,
    maxLength: 30,
  })
  .filter((v) => !v.includes('\u0002'));

export const properties = fc.oneof(
  fc.constant(null),
  fc.dictionary(propKey, propValue, { maxKeys: 8 }),
  fc.record({
    TAGS: fc.string({ minLength: 1, maxLength: 10 }).filter((v) => !v.includes('\u0002')),
    KEYS: fc.constant('k1 k2'),
    UNIQ_KEY: fc.stringMatching(/^[0-9A-F]{32}$/),
    WAIT: fc.constant('true'),
  }),
);

export const topic = fc.oneof(
  fc.stringMatching(/^[%A-Za-z0-9_|-]{1,20}$/),
  fc.string({ unit: anyUnit, maxLength: 40 }),
  fc.string({ unit: 'binary', minLength: 100, maxLength: 200 }),
);

export const body = fc.oneof(
  fc.constant(null),
  fc.uint8Array({ maxLength: 600 }).map((a) => Buffer.from(a)),
  fc.string({ maxLength: 800 }).map((s) => Buffer.from(s.repeat(3))),
);

/** sysFlag bits other than compression (and the host bits, which follow the hosts). */
const plainSysFlag = int32.map((f) => f & ~0x731);

export interface Generated {
  message: EncodableMessage;
  compressType: number | null;
}

export const message: fc.Arbitrary<Generated> = fc
  .record({
    topic,
    flag: int32,
    body,
    properties,
    queueId: int32,
    queueOffset: long,
    commitLogOffset: long,
    sysFlag: plainSysFlag,
    bornTimestamp: long,
    bornHost: host,
    storeTimestamp: long,
    storeHost: host,
    reconsumeTimes: int32,
    preparedTransactionOffset: long,
    bodyCRC: fc.option(int32, { nil: undefined }),
    compressType: fc.constantFrom(null, null, 0, 1, 3),
  })
  .map(({ compressType, ...m }) => ({
    message: { ...m, sysFlag: compressType === null ? m.sysFlag : m.sysFlag | (compressType << 8) },
    compressType,
  }));
