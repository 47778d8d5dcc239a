// Opens N idle TCP connections to HOST:PORT (argv) and keeps them open. With a fourth argument (base64
// bytes), writes those bytes on every connection once it is open (e.g. a long-polling pull request that the
// server then holds). Prints `connected <n>` once every attempt has connected or failed, and `dropped` each time the server closes one of them. When stdin ends
// it closes them all, prints `closed` and exits. Run in a child process so the test's own process does not
// hold twice the file descriptors.
import { Buffer } from 'node:buffer';
import net from 'node:net';

const [host, portText, countText, firstBytes] = process.argv.slice(2);
const first = firstBytes ? Buffer.from(firstBytes, 'base64') : undefined;
const port = Number(portText);
const count = Number(countText);
const sockets = [];
let settled = 0;
let closing = false;

const BATCH = 100;
let batchLeft = 0;
let next = 0;

function settle() {
  settled++;
  if (settled === count) process.stdout.write(`connected ${count}\n`);
  if (--batchLeft === 0) connectBatch();
}

// Connections go out in batches of BATCH, each once the previous one has settled, so the server's
// accept backlog never overflows (an overflow makes the kernel retry a SYN only after seconds).
function connectBatch() {
  const end = Math.min(count, next + BATCH);
  batchLeft = end - next;
  for (; next < end; next++) {
    const s = net.connect({ host, port });
    sockets.push(s);
    s.once('connect', () => {
      if (first) s.write(first);
      settle();
    });
    s.once('error', () => undefined);
    s.once('close', () => {
      if (closing) return;
      if (!s.connecting) process.stdout.write('dropped\n');
      else settle();
    });
  }
}

connectBatch();
process.stdin.resume();
process.stdin.on('end', () => {
  closing = true;
  for (const s of sockets) s.destroy();
  process.stdout.write('closed\n');
  process.exit(0);
});
