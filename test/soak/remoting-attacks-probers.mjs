// The well-behaved clients of remoting-attacks.soak.mjs in a process of their own, so that their latencies are the
// broker's and not those of the attackers' event loop (which writes hundreds of megabytes in some scenarios).
// Started by proberChild() with the broker's addresses; runs until told 'stop' over IPC, then sends its figures.
import { connector, probers } from './remoting-attacks-clients.mjs';

const [host, port, http, topic] = process.argv.slice(2);
const running = probers(connector(host, Number(port)), http, topic);
process.send({ ready: true });
let sent = false;
process.once('message', async () => {
  // Disconnecting only once the figures are written: a disconnect right after send() may drop them.
  process.send({ result: await running.stop() }, () => {
    sent = true;
    process.disconnect();
  });
});
// The soak gone before asking for the figures: nobody is left to stop the loops.
process.once('disconnect', () => sent || process.exit(1));
