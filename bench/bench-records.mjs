// The stored records the codec benches decode: `n` messages of `bodyBytes` with TAGS, KEYS, UNIQ_KEY
// and WAIT, as one pull answer carries them. `codec` is a build's rocketmq-ts/codec module.
import { Buffer } from 'node:buffer';

export function benchRecords({ encodeStoredMessage, createUniqId }, n, bodyBytes) {
  return Array.from({ length: n }, (_, i) =>
    encodeStoredMessage({
      topic: 'BenchTopic',
      body: Buffer.alloc(bodyBytes, 97 + (i % 26)),
      queueId: 1,
      queueOffset: 1000 + i,
      commitLogOffset: 1_000_000 + i * 1200,
      bornTimestamp: Date.now(),
      storeTimestamp: Date.now(),
      bornHost: { ip: '192.168.1.100', port: 50000 + i },
      storeHost: { ip: '10.0.0.1', port: 10911 },
      properties: { TAGS: `Tag${i % 4}`, KEYS: `key-${i} order-${i * 7}`, UNIQ_KEY: createUniqId(), WAIT: 'true' },
    }),
  );
}
