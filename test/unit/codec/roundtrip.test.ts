import fc from 'fast-check';
import {
  checkRecord,
  decodeMessages,
  decodeProperties,
  encodeMessage,
  encodeStoredMessage,
  javaUtf8Length,
  javaUtf8RoundTrip,
  peekRecordFields,
  tagsHashCode,
  type EncodableMessage,
} from '../../../src/common/codec/index.js';
import { message } from './arbitraries.js';

const versionFor = (m: EncodableMessage): 1 | 2 => (javaUtf8Length(m.topic) > 127 ? 2 : 1);

function expectedProps(p: EncodableMessage['properties']): Record<string, string> | null {
  if (p === null || p === undefined) return null;
  const out: Record<string, string> = {};
  for (const [k, v] of p instanceof Map ? p : Object.entries(p)) {
    // defineProperty, not assignment: a generated key may be `__proto__`, which must stay an own property.
    if (typeof v === 'string')
      Object.defineProperty(out, javaUtf8RoundTrip(k), {
        value: javaUtf8RoundTrip(v),
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return Object.keys(out).length === 0 ? null : out; // nothing written: decodes as null
}

describe('property: encode → decode → encode is identical', () => {
  it('encodeMessage (IPv4/IPv6 hosts, unicode topics and properties, compression on and off)', () => {
    fc.assert(
      fc.property(message, ({ message: m, compressType }) => {
        const version = versionFor(m);
        const first = encodeMessage(m, { compress: compressType !== null, version });
        // Raw decode keeps the stored (compressed) body and sysFlag, so re-encoding must give the same bytes.
        const raw = decodeMessages(first, { decompressBody: false });
        expect(raw).toHaveLength(1);
        const d = raw[0] as (typeof raw)[number];
        expect(encodeMessage(d, { version }).equals(first)).toBe(true);

        const [full] = decodeMessages(first, { checkCRC: m.bodyCRC === undefined });
        expect(full?.topic).toBe(javaUtf8RoundTrip(m.topic));
        expect(full?.properties === null ? null : { ...full?.properties }).toEqual(expectedProps(m.properties));
        const bodyIn = m.body && m.body.length > 0 ? Buffer.from(m.body) : null;
        expect(full?.body ?? null).toEqual(bodyIn);
        expect(full?.sysFlag).toBe(d.sysFlag & ~1);
        expect([full?.queueOffset, full?.commitLogOffset, full?.bornTimestamp, full?.storeTimestamp]).toEqual([
          m.queueOffset,
          m.commitLogOffset,
          m.bornTimestamp,
          m.storeTimestamp,
        ]);
        expect(full?.preparedTransactionOffset).toBe(m.preparedTransactionOffset);
        expect(full?.storeSize).toBe(first.length);
        expect(full?.msgId).toBe(full?.properties?.UNIQ_KEY ?? full?.offsetMsgId);
      }),
      { numRuns: 400 },
    );
  });

  it('encodeStoredMessage: checkRecord accepts it, dispatch helpers agree with the decoder', () => {
    fc.assert(
      fc.property(message, ({ message: m }) => {
        const rec = encodeStoredMessage({ ...m, queueId: m.queueId ?? 0, bornTimestamp: m.bornTimestamp ?? 0 });
        expect(checkRecord(rec)).toEqual({ kind: 'message', size: rec.length });
        const [d] = decodeMessages(rec, { decompressBody: false, checkCRC: true });
        if (!d) throw new Error('nothing decoded');
        const again = encodeStoredMessage({ ...d, queueId: d.queueId });
        expect(again.equals(rec)).toBe(true);
        const props = decodeProperties(rec);
        expect(props === null ? null : { ...props }).toEqual(d.properties === null ? null : { ...d.properties });
        const f = peekRecordFields(rec);
        expect(f).toMatchObject({
          size: rec.length,
          topic: d.topic,
          queueId: d.queueId,
          queueOffset: d.queueOffset,
          commitLogOffset: d.commitLogOffset,
          storeTimestamp: d.storeTimestamp,
          sysFlag: d.sysFlag,
          tagsCode: tagsHashCode(d.properties?.TAGS),
        });
      }),
      { numRuns: 300 },
    );
  });
});
