/**
 * encodeFrame writes the header JSON in place (one allocation): the length prefix must count UTF-8
 * bytes, not UTF-16 code units, and the body must follow the header exactly.
 */
import { decodeFrame, encodeFrame } from '../../../src/protocol/index.js';

test('a header with multi-byte characters: the prefix counts bytes and the body follows it', () => {
  const header = { topic: 'Tópico-主题-🚀', remark: 'ü'.repeat(100) };
  const body = Buffer.from([9, 8, 7]);
  const frame = encodeFrame(header, body);
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  expect(frame.readUInt32BE(0)).toBe(json.length);
  expect(frame.subarray(4, 4 + json.length).equals(json)).toBe(true);
  expect(frame.subarray(4 + json.length).equals(body)).toBe(true);
  expect(frame.length).toBe(4 + json.length + body.length);
  const decoded = decodeFrame(frame);
  expect(decoded.header).toEqual(header);
  expect(decoded.body).toEqual(body);
});

test('an empty body adds nothing after the header', () => {
  const frame = encodeFrame({ a: 'é' });
  expect(frame.length).toBe(4 + Buffer.byteLength(JSON.stringify({ a: 'é' })));
  expect(decodeFrame(frame).body).toBeUndefined();
  expect(decodeFrame(encodeFrame({ a: 1 }, Buffer.alloc(0))).body).toBeUndefined();
});
