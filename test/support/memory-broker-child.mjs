// Child process for memory checks: runs the compiled Broker (HTTP and remoting on 127.0.0.1, free ports,
// default connection bounds) in a heap of its own. Run with --expose-gc. Prints
// `READY {"http":"http://...","remoting":"127.0.0.1:N"}`; then on each stdin line `mem` it collects garbage
// and prints `MEM {...}` (heapUsed, rss, external, arrayBuffers in bytes, open connections of each
// listener, held pulls). Shuts the broker down and exits when stdin ends.
import { createInterface } from 'node:readline';
import { setImmediate } from 'node:timers';
import { Broker } from '../../dist/broker/index.js';

if (typeof globalThis.gc !== 'function') throw new Error('memory-broker-child needs --expose-gc');
const broker = await Broker.start({
  storePath: process.argv[2],
  port: 0,
  remotingPort: 0,
  // Every test client comes from 127.0.0.1: the per-address bound would stop them before the global one.
  remotingMaxConnectionsPerAddress: 10_000,
});
process.stdout.write(`READY ${JSON.stringify({ http: broker.address, remoting: broker.remotingAddress })}\n`);

const settle = () => new Promise((r) => setImmediate(r));
const lines = createInterface({ input: process.stdin });
lines.on('line', async (line) => {
  if (line.trim() !== 'mem') return;
  for (let i = 0; i < 3; i++) {
    globalThis.gc();
    await settle();
  }
  const m = process.memoryUsage();
  const report = {
    heapUsed: m.heapUsed,
    rss: m.rss,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    httpConnections: broker.connectionStats().connections,
    remotingConnections: broker.remotingConnectionCount,
    heldPulls: broker.pullRequestHoldService.size,
  };
  process.stdout.write(`MEM ${JSON.stringify(report)}\n`);
});
lines.on('close', () => {
  void broker.shutdown().then(() => process.exit(0));
});
