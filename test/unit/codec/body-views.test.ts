/**
 * decodeMessages' body ownership: by default every body is a copy (the caller may reuse its buffer);
 * with `bodyViews` (the client's pull path, whose response buffer nobody reuses) bodies are views of
 * the input itself. Either way the decoded messages are the same.
 */
import { deflateSync } from 'node:zlib';
import {
  MessageSysFlag,
  decodeMessages,
  encodeStoredMessage,
  type StoredMessageInput,
} from '../../../src/common/codec/index.js';

const record = (i: number, over: Partial<StoredMessageInput> = {}): Buffer =>
  encodeStoredMessage({
    topic: 'TopicViews',
    body: Buffer.from(`body-${i}`),
    queueId: 1,
    queueOffset: i,
    commitLogOffset: i * 200,
    bornTimestamp: 1_700_000_000_000,
    bornHost: { ip: '192.168.1.100', port: 54321 },
    storeHost: { ip: '10.0.0.1', port: 10911 },
    properties: { TAGS: 'TagA', UNIQ_KEY: `ID${i}` },
    ...over,
  });

const pullBody = (): Buffer => Buffer.concat([record(0), record(1), record(2)]);

test('default: bodies are copies, unaffected when the caller overwrites its buffer', () => {
  const input = pullBody();
  const msgs = decodeMessages(input);
  input.fill(0);
  expect(msgs.map((m) => m.body?.toString())).toEqual(['body-0', 'body-1', 'body-2']);
});

test('bodyViews: bodies are views of the input (no copy), and decode the same messages', () => {
  const input = pullBody();
  const views = decodeMessages(input, { bodyViews: true });
  expect(views).toEqual(decodeMessages(input));
  for (const m of views) expect(m.body?.buffer).toBe(input.buffer);
  // Proof that they are views: a change to the input shows through.
  const first = views[0]?.body as Buffer;
  input[first.byteOffset - input.byteOffset] = 'B'.charCodeAt(0);
  expect(first.toString()).toBe('Body-0');
});

test('bodyViews still inflates a compressed body into a fresh buffer', () => {
  const raw = Buffer.alloc(4096, 'z');
  // A zlib body as the store holds it: COMPRESSED_FLAG set, compression type 0 (zlib).
  const input = record(7, { body: deflateSync(raw), sysFlag: MessageSysFlag.COMPRESSED_FLAG });
  const [m] = decodeMessages(input, { bodyViews: true });
  expect(m?.body?.equals(raw)).toBe(true);
  expect(m?.body?.buffer).not.toBe(input.buffer);
});
