// Loaded with `node --import ./bench/broker-alloc-hook.mjs` into a broker child by bench/remoting-broker.bench.mjs
// (not meant to be used by hand): counts the JavaScript heap bytes allocated between two SIGUSR2 signals,
// freed ones included (V8's usage now minus then, plus what every GC in between freed), and the GCs.
// The first signal prints `ALLOC-START`, the second `ALLOC <bytes> <scavenges> <other GCs>` on stdout.
import process from 'node:process';
import v8 from 'node:v8';

let profiler = null;
let usedBefore = 0;
process.on('SIGUSR2', () => {
  if (profiler === null) {
    profiler = new v8.GCProfiler();
    profiler.start();
    usedBefore = v8.getHeapStatistics().used_heap_size;
    process.stdout.write('ALLOC-START\n');
    return;
  }
  const usedAfter = v8.getHeapStatistics().used_heap_size;
  const { statistics } = profiler.stop();
  profiler = null;
  let allocated = usedAfter - usedBefore;
  let scavenges = 0;
  for (const gc of statistics) {
    allocated += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
    if (gc.gcType === 'Scavenge') scavenges++;
  }
  process.stdout.write(`ALLOC ${allocated} ${scavenges} ${statistics.length - scavenges}\n`);
});
