import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { Lz4Error, lz4FrameCompress, lz4FrameDecompress, xxh32 } from '../../../src/common/codec/lz4.js';

interface Fixture {
  noiseHex: string;
  cases: { name: string; input: string; sha256: string; length: number; frame: string }[];
}

const here = path.dirname(fileURLToPath(import.meta.url));
// Frames written by the reference lz4 CLI (v1.9.4) with different frame options.
const fixture = JSON.parse(readFileSync(path.join(here, 'fixtures/lz4-frames.json'), 'utf8')) as Fixture;
const text = Buffer.from(
  Array.from(
    { length: 1400 },
    (_, n) => `line ${n}: the quick brown fox jumps over the lazy dog ${(n * n) % 977}\n`,
  ).join(''),
);
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
const MAX = 64 * 1024 * 1024;

describe('xxh32', () => {
  it.each([
    ['', 0x02cc5d05],
    ['abc', 0x32d153ff],
    ['Nobody inspects the spammish repetition', 0xe2293b2f],
  ])('%j', (s, h) => {
    const b = Buffer.from(s);
    expect(xxh32(b, 0, b.length)).toBe(h);
  });
});

describe('LZ4 frame decoder on frames from the reference lz4 CLI', () => {
  it('rebuilds the fixture inputs', () => {
    expect(sha(text)).toBe(fixture.cases[0]?.sha256);
  });
  it.each(fixture.cases.map((c) => [c.name, c] as const))('%s', (_n, c) => {
    const out = lz4FrameDecompress(Buffer.from(c.frame, 'base64'), MAX);
    expect(out.length).toBe(c.length);
    expect(sha(out)).toBe(c.sha256);
    if (c.input === 'noise') expect(Buffer.from(out).toString('hex')).toBe(fixture.noiseHex);
  });
  it('refuses output above the cap (decompression bomb)', () => {
    const c = fixture.cases[0];
    expect(() => lz4FrameDecompress(Buffer.from(c?.frame ?? '', 'base64'), 10_000)).toThrow(Lz4Error);
    const bomb = lz4FrameCompress(new Uint8Array(1_000_000));
    expect(bomb.length).toBeLessThan(10_000);
    expect(() => lz4FrameDecompress(bomb, 100_000)).toThrow(/exceeds/);
  });
  it('rejects every truncation and never throws anything but Lz4Error on corruption', () => {
    const frame = Buffer.from(fixture.cases[1]?.frame ?? '', 'base64');
    for (let n = 0; n < frame.length; n += 97) {
      expect(() => lz4FrameDecompress(frame.subarray(0, n), MAX)).toThrow(Lz4Error);
    }
    fc.assert(
      fc.property(fc.nat(frame.length - 1), fc.integer({ min: 1, max: 255 }), (pos, x) => {
        const bad = Buffer.from(frame);
        bad[pos] = (bad[pos] as number) ^ x;
        try {
          lz4FrameDecompress(bad, MAX);
        } catch (e) {
          expect(e).toBeInstanceOf(Lz4Error);
        }
      }),
      { numRuns: 300 },
    );
  });
  it('rejects a frame without magic, a reserved bit, a bad header checksum', () => {
    expect(() => lz4FrameDecompress(new Uint8Array(0), MAX)).toThrow(/no LZ4 frame/);
    expect(() => lz4FrameDecompress(Buffer.from('hello world'), MAX)).toThrow(/magic/);
    const frame = Buffer.from(lz4FrameCompress(Buffer.from('abc')));
    const reserved = Buffer.from(frame);
    reserved[4] = (reserved[4] as number) | 0x02;
    expect(() => lz4FrameDecompress(reserved, MAX)).toThrow(/reserved/);
    const hc = Buffer.from(frame);
    hc[6] = (hc[6] as number) ^ 1;
    expect(() => lz4FrameDecompress(hc, MAX)).toThrow(/checksum/);
  });
});

describe('LZ4 frame encoder', () => {
  it.each([0, 1, 12, 13, 100, 65535, 65536, 65537, 200_000])('round-trips %d bytes of text and noise', (n) => {
    const t = Buffer.alloc(n);
    for (let i = 0; i < n; i += text.length) text.copy(t, i, 0, Math.min(text.length, n - i));
    expect(Buffer.from(lz4FrameDecompress(lz4FrameCompress(t), MAX)).equals(t)).toBe(true);
    const noise = Buffer.from(Array.from({ length: n }, (_, i) => (i * 2654435761) >>> 24));
    expect(Buffer.from(lz4FrameDecompress(lz4FrameCompress(noise), MAX)).equals(noise)).toBe(true);
  });
  it('round-trips random data (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.uint8Array({ maxLength: 3000 }), fc.array(fc.constantFrom(0, 1, 2, 97), { maxLength: 3000 })),
        (a) => {
          const input = Uint8Array.from(a);
          expect(Buffer.from(lz4FrameDecompress(lz4FrameCompress(input), MAX)).equals(Buffer.from(input))).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });
  it('compresses repetitive input', () => {
    expect(lz4FrameCompress(text).length).toBeLessThan(text.length / 3);
  });
});
