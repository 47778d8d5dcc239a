// Child process of bench/push-consumer.bench.mjs: hosts some of the drain phase's push consumers (one
// group), each its own PushConsumer with a unique instanceName, and reports to the parent over IPC.
// With `slowListenerMs`, each listener call waits that long first (the memory phase). Not a bench on its own (bench/run.mjs runs only *.bench.mjs).
//
//   parent → child  { type: 'snapshot' }   child → parent  { type: 'progress', received, first, last, rss* }
//                   { type: 'stop' }                        { type: 'snapshot', received, seen (base64) }
//                                                           { type: 'stopped' }
import process from 'node:process';
import { clearInterval, setInterval } from 'node:timers';

// RSS of the bare process, then with the SDK imported (the module graph, before any client exists).
const rssBare = process.memoryUsage().rss;
const { DrainHost } = await import('./push-consumer-drain.mjs');
const rssImported = process.memoryUsage().rss;
const config = JSON.parse(process.argv[2]);
const host = new DrainHost(config);
let rssPeak = rssImported;
const progress = setInterval(() => {
  rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  process.send({ type: 'progress', ...host.progress(), rssBare, rssImported, rssPeak });
}, 100);
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
