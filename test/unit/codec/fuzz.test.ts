import fc from 'fast-check';
import {
  DecodeError,
  checkRecord,
  decodeBatchBody,
  decodeMessage,
  decodeMessages,
  decodeProperties,
  encodeMessage,
  peekRecordFields,
  type DecodeOptions,
} from '../../../src/common/codec/index.js';
import { message } from './arbitraries.js';

const TIME_LIMIT_MS = 2000;

/** Runs `fn`; it must return or throw a DecodeError, and finish within the time limit. */
function onlyDecodeError<T>(fn: () => T): T | DecodeError {
  const t0 = performance.now();
  try {
    return fn();
  } catch (e) {
    if (!(e instanceof DecodeError)) throw new Error(`unexpected ${String(e)}`, { cause: e });
    expect(e.position).toBeGreaterThanOrEqual(0);
    return e;
  } finally {
    expect(performance.now() - t0).toBeLessThan(TIME_LIMIT_MS);
  }
}

const OPTIONS: DecodeOptions[] = [{}, { checkCRC: true }, { decompressBody: false }, { readBody: false }];

function everyDecoder(buf: Buffer): void {
  for (const o of OPTIONS) {
    const r = onlyDecodeError(() => decodeMessages(buf, o));
    if (!(r instanceof DecodeError)) {
      const total = r.reduce((n, m) => n + m.storeSize, 0);
      expect(total).toBe(buf.length); // a successful decode accounts for every byte
    } else {
      expect(r.position).toBeLessThanOrEqual(buf.length);
    }
  }
  onlyDecodeError(() => decodeMessage(buf, 0));
  onlyDecodeError(() => decodeProperties(buf, 0));
  onlyDecodeError(() => peekRecordFields(buf, 0));
  onlyDecodeError(() => decodeBatchBody(buf));
  const c = checkRecord(buf, 0);
  expect(['message', 'blank', 'invalid']).toContain(c.kind);
}

/** A pull body of 1-4 generated messages (compressed, IPv6, unicode...). */
const pullBody = fc.array(message, { minLength: 1, maxLength: 4 }).map((list) =>
  Buffer.concat(
    list.map(({ message: m, compressType }) =>
      encodeMessage(m, {
        compress: compressType !== null,
        version: Buffer.byteLength(m.topic) > 127 || m.topic.length > 120 ? 2 : 1,
      }),
    ),
  ),
);

describe('fuzz: decoders only ever return a result or throw DecodeError, in bounded time', () => {
  it('random buffers', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), (a) => everyDecoder(Buffer.from(a))),
      { numRuns: 300 },
    );
  });

  it('random buffers that start like a record (plausible size and magic)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 8, maxLength: 400 }),
        fc.integer({ min: -10, max: 500 }),
        fc.constantFrom(0xdaa320a7 | 0, 0xdaa320ab | 0, 0xcbd43194 | 0),
        fc.integer(),
        (a, size, magic, sysFlag) => {
          const b = Buffer.from(a);
          b.writeInt32BE(size, 0);
          b.writeInt32BE(magic, 4);
          if (b.length >= 40) b.writeInt32BE(sysFlag, 36);
          everyDecoder(b);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('every truncation of valid pull bodies', () => {
    fc.assert(
      fc.property(pullBody, (buf) => {
        const boundaries = new Set<number>([0]);
        for (let p = 0; p < buf.length; p += buf.readInt32BE(p)) boundaries.add(p + buf.readInt32BE(p));
        const first = buf.readInt32BE(0);
        const wrong: string[] = [];
        for (let n = 0; n < buf.length; n++) {
          const cut = buf.subarray(0, n);
          let error: unknown = null;
          try {
            decodeMessages(cut);
          } catch (e) {
            error = e;
          }
          // A cut exactly at a record boundary is a shorter valid body; anything else is a DecodeError
          // positioned inside the cut buffer.
          const ok = boundaries.has(n)
            ? error === null
            : error instanceof DecodeError && error.position >= 0 && error.position <= n;
          if (!ok) wrong.push(`cut ${n}: ${String(error)}`);
          if (checkRecord(cut, 0, { checkCRC: false }).kind !== (n < first ? 'invalid' : 'message')) {
            wrong.push(`checkRecord at cut ${n}`);
          }
          if (n % 53 === 0) everyDecoder(cut);
        }
        expect(wrong).toEqual([]);
      }),
      { numRuns: 10 },
    );
  });

  it('random byte flips in valid pull bodies', () => {
    fc.assert(
      fc.property(
        pullBody,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 3 }),
        (buf, flips) => {
          const bad = Buffer.from(buf);
          for (const [pos, x] of flips) {
            const i = pos % bad.length;
            bad[i] = (bad[i] as number) ^ x;
          }
          everyDecoder(bad);
        },
      ),
      { numRuns: 250 },
    );
  });

  it('a flipped body byte is caught by checkCRC and by checkRecord', () => {
    fc.assert(
      fc.property(message, fc.nat(), ({ message: m }, pos) => {
        const body = Buffer.from('some body bytes');
        const version = Buffer.byteLength(m.topic) > 127 || m.topic.length > 120 ? 2 : 1;
        const rec = encodeMessage({ ...m, body, bodyCRC: undefined, sysFlag: (m.sysFlag ?? 0) & ~0x701 }, { version });
        const at = rec.indexOf(body) + (pos % body.length);
        rec[at] = (rec[at] as number) ^ 0x5a;
        expect(() => decodeMessages(rec, { checkCRC: true })).toThrow(DecodeError);
        expect(checkRecord(rec)).toMatchObject({ kind: 'invalid', reason: 'body CRC mismatch' });
      }),
      { numRuns: 100 },
    );
  });
});
