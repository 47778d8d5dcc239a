import { decodeMessage } from '../../../src/common/codec/index.js';
import { checkRecordHeader, decodeLaidOut } from '../../../src/common/codec/decode.js';
import { layoutFromLengths, newLayout } from '../../../src/common/codec/record-scan.js';
import { codecVectors, hexBuf } from './helpers.js';

/** Every vector record whose header checks out, with a copy padded in front (records start anywhere). */
const records = codecVectors()
  .cases.map((c) => ({ id: c.id, buf: hexBuf(c.hex) }))
  .filter((c) => c.buf.length > 0 && checkRecordHeader(c.buf, 0, newLayout()) === null)
  .flatMap((c) => [
    { id: c.id, buf: c.buf, at: 0 },
    { id: `${c.id} (at 7)`, buf: Buffer.concat([Buffer.alloc(7, 0xee), c.buf]), at: 7 },
  ]);

const outcome = (f: () => unknown): unknown => {
  try {
    return { ok: f() };
  } catch (e) {
    return { error: (e as Error).constructor.name, message: (e as Error).message };
  }
};

describe('decoding from the layout found at indexing (a header walked once)', () => {
  it('has vector records of both versions to check', () => {
    expect(records.length).toBeGreaterThan(10);
    expect(new Set(records.map((r) => r.buf.readInt32BE(r.at + 4))).size).toBe(2);
  });

  it.each(records)('$id: layoutFromLengths rebuilds the scanned layout from its three lengths', ({ buf, at }) => {
    const scanned = newLayout();
    expect(checkRecordHeader(buf, at, scanned)).toBeNull();
    const rebuilt = newLayout();
    layoutFromLengths(buf, at, scanned.bodyLength, scanned.topicLength, scanned.propsLength, rebuilt);
    expect(rebuilt).toEqual(scanned);
  });

  it.each(records)('$id: decodeLaidOut gives what decodeMessage gives, errors included', ({ buf, at }) => {
    const l = newLayout();
    checkRecordHeader(buf, at, l);
    expect(outcome(() => decodeLaidOut(buf, at, l))).toEqual(outcome(() => decodeMessage(buf, at).message));
    const raw = { decompressBody: false };
    expect(outcome(() => decodeLaidOut(buf, at, l, raw))).toEqual(outcome(() => decodeMessage(buf, at, raw).message));
    const crc = { checkCRC: true };
    expect(outcome(() => decodeLaidOut(buf, at, l, crc))).toEqual(outcome(() => decodeMessage(buf, at, crc).message));
  });
});
