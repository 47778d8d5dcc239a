// Child process of bench/push-consumer.bench.mjs: hosts some of the drain phase's push consumers (one
// group), each its own PushConsumer with a unique instanceName, and reports to the parent over IPC.
// Not a bench on its own (bench/run.mjs runs only *.bench.mjs).
//
//   parent → child  { type: 'snapshot' }   child → parent  { type: 'progress', received, first, last }
//                   { type: 'stop' }                        { type: 'snapshot', received, seen (base64) }
//                                                           { type: 'stopped' }
import process from 'node:process';
import { clearInterval, setInterval } from 'node:timers';
import { DrainHost } from './push-consumer-drain.mjs';

const config = JSON.parse(process.argv[2]);
const host = new DrainHost(config);
const progress = setInterval(() => process.send({ type: 'progress', ...host.progress() }), 100);
process.on('message', async (msg) => {
  if (msg.type === 'snapshot') process.send({ type: 'snapshot', ...host.snapshot() });
  if (msg.type === 'stop') {
    clearInterval(progress);
    await host.stop();
    process.send({ type: 'stopped' }, () => process.exit(0));
  }
});
await host.start();
process.send({ type: 'started' });
