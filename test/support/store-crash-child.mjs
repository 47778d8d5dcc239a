// Child process of the store crash test: opens the compiled MessageStore on argv[2], appends under
// load (many appends in flight, random sizes, several queues) and prints one line per acknowledged
// append: `A <commitLogOffset> <queueId> <queueOffset> <storeTimestamp> <sha1 of body>`. The parent
// kills it with SIGKILL at a random moment; a line is printed only after its append resolved.
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { setInterval } from 'node:timers';
import { MessageStore } from '../../dist/store/index.js';

const [storePath, segmentArg, modeArg] = process.argv.slice(2);
const store = await MessageStore.open({
  storePath,
  mappedFileSizeCommitLog: Number(segmentArg ?? 65536),
  mappedFileSizeConsumeQueue: 50 * 20,
  flushDiskType: modeArg === 'sync' ? 'SYNC_FLUSH' : 'ASYNC_FLUSH',
  flushIntervalCommitLogMs: 50,
  flushIntervalConsumeQueueMs: 30,
});
process.stdout.write(`READY ${store.getCommitLogMaxOffset()}\n`);

let n = 0;
let out = [];
const flushOut = () => {
  if (out.length > 0) process.stdout.write(out.join(''));
  out = [];
};
const one = async () => {
  const i = n++;
  const body = Buffer.alloc(1 + ((i * 7919) % 3000), i % 251);
  body.write(`msg-${process.pid}-${i}`);
  const queueId = i % 4;
  const r = await store.putMessage({
    topic: 'CrashTopic',
    queueId,
    flag: 0,
    body,
    properties: { TAGS: `tag${i % 5}`, KEYS: `k${i}` },
    sysFlag: 0,
    bornTimestamp: Date.now(),
    bornHost: { ip: '127.0.0.1', port: 1234 },
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
  });
  if (r.status !== 'PUT_OK') throw new Error(`put failed: ${r.status} ${r.remark ?? ''}`);
  const sha = createHash('sha1').update(body).digest('hex');
  out.push(`A ${r.physicalOffset} ${queueId} ${r.queueOffset} ${r.storeTimestamp} ${sha}\n`);
};
// Keep 64 appends in flight forever; the parent ends this process.
const worker = async () => {
  for (;;) {
    await one();
    if (out.length >= 16) flushOut();
  }
};
setInterval(flushOut, 5);
await Promise.all(Array.from({ length: 64 }, worker));
