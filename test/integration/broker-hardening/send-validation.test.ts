/**
 * SEND_MESSAGE refuses, with MESSAGE_ILLEGAL, what consumers could not decode: a sysFlag with bits the
 * broker does not accept, and a body flagged compressed that does not decompress (or expands past the
 * consumers' default limit). Well-formed zlib and lz4 bodies are stored and read back.
 */
import { deflateSync } from 'node:zlib';
import {
  CompressionType,
  DEFAULT_MAX_DECOMPRESSED_BYTES,
  MessageSysFlag,
  decodeMessages,
  encodeBatchBody,
} from '../../../src/common/codec/index.js';
import { lz4FrameCompress } from '../../../src/common/codec/lz4.js';
import { ResponseCode } from '../../../src/protocol/index.js';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, type BrokerFixture } from '../../support/broker-fixture.js';

let f: BrokerFixture;
beforeAll(async () => {
  f = await startBroker();
});
afterAll(async () => {
  await f.close();
});

const header = (topic: string, sysFlag: number) => ({
  producerGroup: 'pg',
  topic,
  defaultTopic: 'TBW102',
  defaultTopicQueueNums: 1,
  queueId: 0,
  sysFlag,
  bornTimestamp: Date.now(),
  flag: 0,
  properties: '',
});

const send = (topic: string, sysFlag: number, body: Buffer, command = 'SEND_MESSAGE') =>
  f.client.call(command, header(topic, sysFlag), body);

async function maxOffset(topic: string): Promise<number> {
  const r = await f.client.call('GET_MAX_OFFSET', { topic, queueId: 0 });
  return Number(r.header.offset ?? 0);
}

const ZLIB = MessageSysFlag.COMPRESSED_FLAG | (CompressionType.ZLIB << 8);
const LZ4 = MessageSysFlag.COMPRESSED_FLAG | (CompressionType.LZ4 << 8);

describe('SEND_MESSAGE checks flags and compressed bodies', () => {
  test('a body flagged compressed that is not is refused MESSAGE_ILLEGAL and not stored', async () => {
    const topic = uniqueName('SV');
    for (const sysFlag of [MessageSysFlag.COMPRESSED_FLAG, ZLIB, LZ4]) {
      const r = await send(topic, sysFlag, Buffer.from('plain text, not compressed'));
      expect(r.code).toBe(ResponseCode.MESSAGE_ILLEGAL);
      expect(r.remark).toMatch(/flagged compressed but does not decompress/);
    }
    expect(await maxOffset(topic)).toBe(0);
  });

  test('an unknown compression type, unknown bits, a type without COMPRESSED and transaction types are refused', async () => {
    const topic = uniqueName('SV');
    const zipped = deflateSync(Buffer.from('x'.repeat(100)));
    const cases: Array<[number, RegExp]> = [
      [MessageSysFlag.COMPRESSED_FLAG | (5 << 8), /does not decompress: unsupported compression/],
      [0x800, /bits this broker does not accept \(0x800\)/],
      [MessageSysFlag.INNER_BATCH_FLAG, /does not accept \(0x80\)/],
      [CompressionType.LZ4 << 8, /compression type without the COMPRESSED flag/],
      [MessageSysFlag.TRANSACTION_PREPARED_TYPE, /transaction message/],
      [MessageSysFlag.TRANSACTION_ROLLBACK_TYPE, /transaction message/],
    ];
    for (const [sysFlag, remark] of cases) {
      const r = await send(topic, sysFlag, zipped);
      expect({ sysFlag, code: r.code }).toEqual({ sysFlag, code: ResponseCode.MESSAGE_ILLEGAL });
      expect(r.remark).toMatch(remark);
    }
    expect(await maxOffset(topic)).toBe(0);
  });

  test('a zlib bomb expanding past the consumers default limit is refused', async () => {
    const bomb = deflateSync(Buffer.alloc(DEFAULT_MAX_DECOMPRESSED_BYTES + 1024), { level: 1 });
    const r = await send(uniqueName('SV'), ZLIB, bomb);
    expect(r.code).toBe(ResponseCode.MESSAGE_ILLEGAL);
    expect(r.remark).toMatch(/expands past/);
  });

  test('zlib (type 0 and 3) and lz4 bodies are stored and decode in a pull', async () => {
    const topic = uniqueName('SV');
    const text = 'compress me '.repeat(200);
    const bodies: Array<[number, Buffer]> = [
      [MessageSysFlag.COMPRESSED_FLAG, deflateSync(Buffer.from(text))],
      [ZLIB, deflateSync(Buffer.from(text))],
      [LZ4, Buffer.from(lz4FrameCompress(Buffer.from(text)))],
      [MessageSysFlag.COMPRESSED_FLAG, Buffer.alloc(0)],
      [MessageSysFlag.MULTI_TAGS_FLAG, Buffer.from('plain')],
    ];
    for (const [sysFlag, body] of bodies) expect((await send(topic, sysFlag, body)).code).toBe(ResponseCode.SUCCESS);
    const pulled = await f.client.pull({ group: uniqueName('g'), topic, queueId: 0 });
    const msgs = decodeMessages(pulled.body);
    expect(msgs.map((m) => m.body?.toString() ?? '')).toEqual([text, text, text, '', 'plain']);
  });

  test('a batch with one bad compressed body is refused whole', async () => {
    const topic = uniqueName('SV');
    const good = deflateSync(Buffer.from('good'));
    const batch = encodeBatchBody([
      { body: good, flag: 0, properties: {} },
      { body: Buffer.from('not zlib'), flag: 0, properties: {} },
    ]);
    const r = await send(topic, ZLIB, batch, 'SEND_BATCH_MESSAGE');
    expect(r.code).toBe(ResponseCode.MESSAGE_ILLEGAL);
    expect(r.remark).toMatch(/message 1 of the batch/);
    expect(await maxOffset(topic)).toBe(0);
    const ok = encodeBatchBody([
      { body: good, flag: 0, properties: {} },
      { body: good, flag: 0, properties: {} },
    ]);
    expect((await send(topic, ZLIB, ok, 'SEND_BATCH_MESSAGE')).code).toBe(ResponseCode.SUCCESS);
    expect(await maxOffset(topic)).toBe(2);
  });
});
