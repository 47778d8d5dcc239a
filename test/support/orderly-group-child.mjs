// One member of an orderly consumer group, in its own process, for the orderly group tests
// and test/soak/orderly-group.soak.mjs. It imports the built package (dist/) and reports on stdout, one
// JSON line each (stdout to a pipe is synchronous, so a line is out before the call's offset can move):
//   {"t":"started","clientId":..}                 once consuming
//   {"t":"call","q":..,"s":..,"e":..,"msgs":[[key,seq,offset],..]}  after each listener call (s, e: Date.now())
//   {"t":"inside","q":..,"s":..,"msgs":[..]}      when armed: the next call reports this and never returns
//   {"t":"stopped","report":{..}}                 after a graceful shutdown
//   {"t":"log","at":..,"level":..,"msg":..,"detail":..}  a warning or error the consumer logged
// stdin commands, one a line: "arm" (the next listener call hangs after reporting "inside", so the parent
// can SIGKILL this process in the middle of a batch), "stop" (graceful shutdown, then exit).
// argv[2]: JSON { dist, endpoints | namesrvAddr, group, topic, keyConcurrency?, batch?, workMs?,
//                 lockIntervalMs, lockMaxLiveMs }
import { createInterface } from 'node:readline';
import { clearInterval, setInterval } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';

const cfg = JSON.parse(process.argv[2]);
const { PushConsumer } = await import(cfg.dist);

const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
// Warnings and errors go to the parent ({"t":"log"}), which shows them beside a hand-over re-delivery.
const report = (level) => (obj, msg) =>
  out({ t: 'log', at: Date.now(), level, msg: msg ?? String(obj), detail: String(obj?.err?.message ?? '') });
const noop = () => {};
const logger = { debug: noop, info: noop, warn: report('warn'), error: report('error') };

const consumer = new PushConsumer({
  ...(cfg.namesrvAddr ? { namesrvAddr: cfg.namesrvAddr } : { endpoints: cfg.endpoints }),
  consumerGroup: cfg.group,
  consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
  consumeMessageBatchMaxSize: cfg.batch ?? 1,
  rebalanceLockIntervalMs: cfg.lockIntervalMs,
  rebalanceLockMaxLiveTimeMs: cfg.lockMaxLiveMs,
  persistConsumerOffsetIntervalMs: cfg.persistMs ?? 1000,
  heartbeatBrokerIntervalMs: 1000,
  shutdownTimeoutMs: 5000,
  logger,
});
consumer.subscribe(cfg.topic, '*');

let armed = false;
let calls = 0;
const workMs = cfg.workMs ?? 2;
consumer.registerMessageListenerOrderly(
  async (msgs, ctx) => {
    const s = Date.now();
    const q = ctx.messageQueue.queueId;
    const list = msgs.map((m) => {
      const [key, seq] = m.body.toString().split(':');
      return [key, Number(seq), m.queueOffset];
    });
    if (armed) {
      armed = false;
      out({ t: 'inside', q, s, msgs: list });
      // Never returns: the parent kills this process now, in the middle of the batch.
      await new Promise(() => {});
    }
    // Some calls take longer, so the parent's lock-table samples land inside listener calls.
    await sleep(++calls % 10 === 0 ? workMs * 10 : workMs);
    out({ t: 'call', q, s, e: Date.now(), msgs: list });
  },
  cfg.keyConcurrency ? { keyConcurrency: cfg.keyConcurrency } : {},
);

await consumer.start();
out({ t: 'started', clientId: consumer.clientId });
const keepAlive = setInterval(() => {}, 1000);

// The parent went away (a timed-out test, a Jest worker that was killed): don't linger.
process.stdin.on('end', () => process.exit(1));
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'arm') armed = true;
  else if (line === 'stop') {
    void consumer.shutdown().then((report) => {
      out({ t: 'stopped', report: { unfinishedListeners: report.unfinishedListeners, errors: report.errors.length } });
      clearInterval(keepAlive);
      process.exit(0);
    });
  }
});
