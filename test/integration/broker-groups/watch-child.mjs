// A consumer process reduced to its membership calls: it heartbeats into a group, then holds
// WATCH_CONSUMER_IDS calls forever (renewing each one), and prints "watching" once the first is held.
// Run by kill.test.ts, which kills it with SIGKILL. Plain node:http, framing per docs/protocol.md.
import { Buffer } from 'node:buffer';
import http from 'node:http';

const [address, group, clientID] = process.argv.slice(2);

function call(command, header, body) {
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32BE(json.length, 0);
  const frame = Buffer.concat([prefix, json, body ?? Buffer.alloc(0)]);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${address}/v1/${command}`,
      { method: 'POST', headers: { 'content-type': 'application/x-rocketmq-command' } },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const b = Buffer.concat(chunks);
          const n = b.readUInt32BE(0);
          resolve(JSON.parse(b.toString('utf8', 4, 4 + n)));
        });
      },
    );
    req.on('error', reject);
    req.end(frame);
  });
}

const heartbeat = {
  clientID,
  consumerDataSet: [
    {
      groupName: group,
      consumeType: 'CONSUME_PASSIVELY',
      messageModel: 'CLUSTERING',
      consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
      subscriptionDataSet: [],
    },
  ],
};
await call('HEART_BEAT', {}, Buffer.from(JSON.stringify(heartbeat)));
let version = -1;
let first = true;
for (;;) {
  const pending = call('WATCH_CONSUMER_IDS', { consumerGroup: group, clientID, version, timeoutMillis: 60_000 });
  if (first && version !== -1) {
    first = false;
    process.stdout.write('watching\n');
  }
  const answer = await pending;
  version = answer.header.version;
}
