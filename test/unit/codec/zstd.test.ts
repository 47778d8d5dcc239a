import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { ZstdError, zstdDecompress, zstdDecompressedSize } from '../../../src/common/codec/zstd.js';
import {
  CompressionType,
  DecodeError,
  MessageSysFlag,
  decodeMessages,
  encodeMessage,
  type EncodableMessage,
} from '../../../src/common/codec/index.js';

interface Fixture {
  cases: { name: string; input: string; sha256: string; length: number; frame: string }[];
  bombs: { name: string; length: number; frame: string }[];
}

const here = path.dirname(fileURLToPath(import.meta.url));
// Frames written by the zstd CLI (v1.5.4) and by zstd-jni's ZstdOutputStream, the stream RocketMQ 5's
// ZstdCompressor writes (level 5 is its default compress level).
const fixture = JSON.parse(readFileSync(path.join(here, 'fixtures/zstd-frames.json'), 'utf8')) as Fixture;
const text = Buffer.from(
  Array.from(
    { length: 1400 },
    (_, n) => `line ${n}: the quick brown fox jumps over the lazy dog ${(n * n) % 977}\n`,
  ).join(''),
);
const noise = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 2654435761) >>> 24));
const inputs: Record<string, Buffer> = {
  text,
  'text+text': Buffer.concat([text, text]),
  noise,
  'text x6': Buffer.concat(Array.from({ length: 6 }, () => text)),
};
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
const MAX = 64 * 1024 * 1024;
const frameOf = (name: string): Buffer => {
  const c = fixture.cases.find((x) => x.name.startsWith(name));
  if (!c) throw new Error(`no fixture ${name}`);
  return Buffer.from(c.frame, 'base64');
};

describe('zstd decoder on frames from the zstd CLI and zstd-jni', () => {
  it('rebuilds the fixture inputs', () => {
    for (const c of fixture.cases) expect(sha(inputs[c.input] ?? Buffer.alloc(0))).toBe(c.sha256);
  });
  it.each(fixture.cases.map((c) => [c.name, c] as const))('%s', (_n, c) => {
    const out = zstdDecompress(Buffer.from(c.frame, 'base64'), MAX);
    expect(out.length).toBe(c.length);
    expect(Buffer.from(out).equals(inputs[c.input] ?? Buffer.alloc(0))).toBe(true);
  });
  it('skips skippable frames before and between frames', () => {
    const skip = Buffer.from([0x5a, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9]);
    const one = frameOf('zstd CLI -3, content');
    const out = zstdDecompress(Buffer.concat([skip, one, skip, one]), MAX);
    expect(Buffer.from(out).equals(Buffer.concat([text, text]))).toBe(true);
  });
});

describe('zstd decoder refuses what it must', () => {
  it.each(fixture.bombs.map((b) => [b.name, b] as const))('a decompression bomb: %s', (_n, b) => {
    const frame = Buffer.from(b.frame, 'base64');
    expect(frame.length).toBeLessThan(10_000);
    expect(() => zstdDecompress(frame, 1_000_000)).toThrow(/exceeds the limit of 1000000 bytes/);
  });
  it('output exactly at the cap is accepted, one byte less is refused', () => {
    const frame = frameOf('zstd-jni 1.5.2 ZstdOutputStream level 5');
    expect(zstdDecompress(frame, text.length).length).toBe(text.length);
    expect(() => zstdDecompress(frame, text.length - 1)).toThrow(ZstdError);
    const streamed = frameOf('zstd CLI -1 streamed');
    expect(() => zstdDecompress(streamed, 300_000)).toThrow(/exceeds the limit/);
  });
  it('empty input, bad magic, reserved bit, dictionary, huge window, trailing bytes', () => {
    const one = frameOf('zstd CLI -3, content');
    expect(() => zstdDecompress(new Uint8Array(0), MAX)).toThrow(/empty/);
    expect(() => zstdDecompress(Buffer.from('hello world'), MAX)).toThrow(/bad magic/);
    const reserved = Buffer.from(one);
    reserved[4] = (reserved[4] as number) | 0x08;
    expect(() => zstdDecompress(reserved, MAX)).toThrow(/reserved bit/);
    // descriptor: dictionary id of 1 byte, no single segment; window descriptor; dictionary 7; one empty raw last block
    const dict = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x01, 0x00, 0x07, 0x01, 0x00, 0x00]);
    expect(() => zstdDecompress(dict, MAX)).toThrow(/dictionary 7/);
    // window descriptor 0x88: 2^(10+17) * (1 + 0/8) ... exponent 17 gives 128 MiB, 0x89 a bit more
    const window = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x89, 0x01, 0x00, 0x00]);
    expect(() => zstdDecompress(window, MAX)).toThrow(/window of/);
    expect(() => zstdDecompress(Buffer.concat([one, Buffer.from([1, 2, 3])]), MAX)).toThrow(ZstdError);
  });
  it('rejects every truncation and throws only ZstdError on corruption', () => {
    const frame = frameOf('zstd CLI -3, content');
    for (let n = 0; n < frame.length; n += 97)
      expect(() => zstdDecompress(frame.subarray(0, n), MAX)).toThrow(ZstdError);
    fc.assert(
      fc.property(fc.nat(frame.length - 1), fc.integer({ min: 1, max: 255 }), (pos, x) => {
        const bad = Buffer.from(frame);
        bad[pos] = (bad[pos] as number) ^ x;
        try {
          zstdDecompress(bad, 200_000);
        } catch (e) {
          expect(e).toBeInstanceOf(ZstdError);
        }
      }),
      { numRuns: 100 },
    );
  });
});

describe('zstd size counted in slices (the broker check of a stored body)', () => {
  const counting = (): { pauses: number; pause: () => Promise<void> } => {
    const state = {
      pauses: 0,
      pause: (): Promise<void> => {
        state.pauses++;
        return Promise.resolve();
      },
    };
    return state;
  };

  it.each(fixture.cases.map((c) => [c.name, c] as const))('%s: the size zstdDecompress gives', async (_n, c) => {
    const p = counting();
    await expect(zstdDecompressedSize(Buffer.from(c.frame, 'base64'), MAX, p.pause, 64)).resolves.toBe(c.length);
    expect(p.pauses).toBe(Math.ceil(Buffer.from(c.frame, 'base64').length / 64) - 1);
  });

  it.each(fixture.bombs.map((b) => [b.name, b] as const))('refuses the bomb %s at the limit', async (_n, b) => {
    const p = counting();
    await expect(zstdDecompressedSize(Buffer.from(b.frame, 'base64'), 1_000_000, p.pause, 16)).rejects.toThrow(
      /exceeds the limit of 1000000 bytes/,
    );
  });

  it('a stream of raw and RLE blocks past the limit is refused from its block headers, before any decoding', async () => {
    // No declared size; 64 RLE blocks of 128 KiB (8 MiB) and one raw block of 3 bytes.
    const parts = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 7 << 3])];
    for (let i = 0; i < 64; i++) {
      const h = (1 << 1) | ((128 * 1024) << 3);
      parts.push(Buffer.from([h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff, 0x61]));
    }
    parts.push(Buffer.from([1 | (3 << 3), 0, 0, 1, 2, 3]));
    const stream = Buffer.concat(parts);
    const p = counting();
    await expect(zstdDecompressedSize(stream, 1_000_000, p.pause, 16)).rejects.toThrow(
      `zstd content of ${8 * 1024 * 1024 + 3} bytes exceeds the limit of 1000000 bytes`,
    );
    expect(p.pauses).toBe(0);
    await expect(zstdDecompressedSize(stream, 8 * 1024 * 1024 + 3, p.pause, 64)).resolves.toBe(8 * 1024 * 1024 + 3);
  });

  it('refuses what zstdDecompress refuses, with the same errors', async () => {
    const frame = frameOf('zstd CLI -3, content');
    const p = counting();
    for (const bad of [new Uint8Array(0), Buffer.from('hello world'), frame.subarray(0, frame.length - 5)]) {
      const sync = ((): unknown => {
        try {
          zstdDecompress(bad, MAX);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(sync).toBeInstanceOf(ZstdError);
      await expect(zstdDecompressedSize(bad, MAX, p.pause, 100)).rejects.toThrow((sync as Error).message);
    }
    await expect(zstdDecompressedSize(frame, text.length - 1, p.pause, 100)).rejects.toThrow(ZstdError);
  });
});

describe('decodeMessages with a ZSTD body (RocketMQ: compression type 2 in sysFlag bits 8-10)', () => {
  const msg = (over: Partial<EncodableMessage> = {}): EncodableMessage => ({
    topic: 'TopicTest',
    body: Buffer.alloc(0),
    bornHost: { ip: '192.168.1.100', port: 54321 },
    storeHost: { ip: '10.0.0.1', port: 10911 },
    bornTimestamp: 1_700_000_000_000,
    storeTimestamp: 1_700_000_000_123,
    properties: { TAGS: 'a' },
    ...over,
  });
  const zstdFlags = (CompressionType.ZSTD << 8) | MessageSysFlag.COMPRESSED_FLAG;

  it('inflates the body and clears COMPRESSED_FLAG, keeping the type bits', () => {
    const body = frameOf('zstd-jni 1.5.2 ZstdOutputStream level 5');
    const rec = encodeMessage(msg({ sysFlag: zstdFlags, body }));
    const [d] = decodeMessages(rec, { checkCRC: true });
    expect(d?.sysFlag).toBe(CompressionType.ZSTD << 8);
    expect(d?.body?.equals(text)).toBe(true);
    expect(decodeMessages(rec, { decompressBody: false })[0]?.body?.equals(body)).toBe(true);
  });
  it('a zstd bomb or a corrupt zstd body is a DecodeError naming zstd', () => {
    const declared = Buffer.from(fixture.bombs[1]?.frame ?? '', 'base64');
    const rec = encodeMessage(msg({ sysFlag: zstdFlags, body: declared }));
    expect(() => decodeMessages(rec)).toThrow(DecodeError);
    expect(() => decodeMessages(rec)).toThrow(/zstd: zstd content of 100000000 bytes exceeds the limit of 67108864/);
    const streamed = Buffer.from(fixture.bombs[0]?.frame ?? '', 'base64');
    const rec2 = encodeMessage(msg({ sysFlag: zstdFlags, body: streamed }));
    expect(() => decodeMessages(rec2, { maxDecompressedBytes: 100_000 })).toThrow(
      /zstd: zstd content (of \d+ bytes )?exceeds the limit of 100000 bytes/,
    );
    const bad = encodeMessage(msg({ sysFlag: zstdFlags, body: Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0]) }));
    expect(() => decodeMessages(bad)).toThrow(DecodeError);
  });
});
