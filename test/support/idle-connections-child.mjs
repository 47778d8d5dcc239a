// Opens N idle TCP connections to HOST:PORT (argv) and keeps them open. Prints `connected <n>` once every
// attempt has connected or failed, and `dropped` each time the server closes one of them. When stdin ends
// it closes them all, prints `closed` and exits. Run in a child process so the test's own process does not
// hold twice the file descriptors.
import net from 'node:net';

const [host, portText, countText] = process.argv.slice(2);
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
    s.once('connect', settle);
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
