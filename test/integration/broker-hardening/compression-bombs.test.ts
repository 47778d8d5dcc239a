/**
 * Compression bombs: a body flagged LZ4 (or zstd) is measured before it is decoded — an LZ4 body's size is
 * counted from its sequences, without producing output; a zstd body's declared size is read from its
 * frame headers, and one that declares none is decoded in slices and counted up to the limit — and a body that would expand past the store's
 * maxMessageSize is refused with MESSAGE_ILLEGAL, quickly, and never stored.
 */
import { lz4FrameCompress } from '../../../src/common/codec/lz4.js';
import { compressBody } from '../../../src/common/codec/compression.js';
import { CompressionType } from '../../../src/common/codec/constants.js';
import { ResponseCode } from '../../../src/protocol/index.js';
import { lz4DecompressedSize } from '../../../src/broker/processors/message-check.js';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, type BrokerFixture } from '../../support/broker-fixture.js';

const MiB = 1024 * 1024;
const sysFlag = (type: number): number => 0x1 | (type << 8);

let fx: BrokerFixture;
beforeAll(async () => {
  fx = await startBroker({ store: { maxMessageSize: 1 * MiB } });
});
afterAll(async () => {
  await fx?.close();
});

const send = (topic: string, body: Buffer, flag: number) =>
  fx.client.call(
    'SEND_MESSAGE',
    {
      producerGroup: 'bomb-producer',
      topic,
      defaultTopic: 'TBW102',
      defaultTopicQueueNums: 4,
      queueId: 0,
      sysFlag: flag,
      bornTimestamp: Date.now(),
      flag: 0,
      properties: '',
    },
    body,
  );

test('the LZ4 size count matches what the body decompresses to', () => {
  const samples = [Buffer.alloc(0), Buffer.from('hello hello hello hello'), Buffer.alloc(3 * MiB, 7)];
  const random = Buffer.alloc(300_000);
  for (let i = 0; i < random.length; i++) random[i] = (i * 2654435761) >>> 24;
  samples.push(random);
  for (const s of samples) expect(lz4DecompressedSize(lz4FrameCompress(s))).toBe(s.length);
  // With a limit, counting stops once past it: some size past the limit, the same for every larger limit below.
  for (const s of samples.filter((x) => x.length > 1000)) {
    const lz4 = lz4FrameCompress(s);
    expect(lz4DecompressedSize(lz4, 999)).toBeGreaterThan(999);
    expect(lz4DecompressedSize(lz4, s.length)).toBe(s.length);
  }
});

/** A zstd frame declaring 16 MiB of content in its header, with one RLE block (no zstd compressor here). */
function zstdBomb(): Buffer {
  const header = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0, 0, 0, 0, 0]);
  header.writeUInt32LE(16 * MiB, 5);
  const block = 1 | (1 << 1) | ((128 * 1024) << 3);
  return Buffer.concat([header, Buffer.from([block & 0xff, (block >> 8) & 0xff, (block >> 16) & 0xff, 0])]);
}

test('a zstd frame declaring more than maxMessageSize is refused MESSAGE_ILLEGAL before it is decoded', async () => {
  const r = await send(uniqueName('Bomb'), zstdBomb(), sysFlag(CompressionType.ZSTD));
  expect(r.code).toBe(ResponseCode.MESSAGE_ILLEGAL);
  expect(r.remark).toContain('expands past');
});

/**
 * A zstd frame that declares no content size (as streaming compressors write it), made of `blocks` RLE
 * blocks of `blockBytes` bytes each: its size is only known by decoding it.
 */
function zstdStreamed(blocks: number, blockBytes: number): Buffer {
  const parts = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 7 << 3])]; // no size, 128 KiB window
  for (let i = 0; i < blocks; i++) {
    const header = (i === blocks - 1 ? 1 : 0) | (1 << 1) | (blockBytes << 3);
    parts.push(Buffer.from([header & 0xff, (header >> 8) & 0xff, (header >> 16) & 0xff, 0x61]));
  }
  return Buffer.concat(parts);
}

test('a zstd frame without a declared size is decoded in slices up to maxMessageSize, then refused', async () => {
  const topic = uniqueName('Bomb');
  const bomb = zstdStreamed(128, 128 * 1024); // 16 MiB from 518 bytes
  const r = await send(topic, bomb, sysFlag(CompressionType.ZSTD));
  expect(r.code).toBe(ResponseCode.MESSAGE_ILLEGAL);
  expect(r.remark).toContain('expands past');
  const ok = await send(topic, zstdStreamed(4, 1000), sysFlag(CompressionType.ZSTD));
  expect(ok.code).toBe(ResponseCode.SUCCESS);
});

test.each([
  ['LZ4', CompressionType.LZ4],
  ['zlib', CompressionType.ZLIB],
])('a %s bomb expanding past maxMessageSize is refused MESSAGE_ILLEGAL and not stored', async (_, type) => {
  const topic = uniqueName('Bomb');
  const bomb = compressBody(Buffer.alloc(16 * MiB), type);
  expect(bomb.length).toBeLessThan(MiB);
  const t0 = performance.now();
  const r = await send(topic, bomb, sysFlag(type));
  const ms = performance.now() - t0;
  expect(r.code).toBe(ResponseCode.MESSAGE_ILLEGAL);
  expect(r.remark).toContain('expands past');
  expect(ms).toBeLessThan(2000);
  const ok = await send(topic, compressBody(Buffer.alloc(1000, 1), type), sysFlag(type));
  expect(ok.code).toBe(ResponseCode.SUCCESS);
});
