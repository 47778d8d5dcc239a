// Child process that opens the compiled MessageStore on argv[2], prints `READY <pid>` and keeps it open
// until killed (or until stdin closes, when it shuts the store down cleanly).
import process from 'node:process';
import { MessageStore } from '../../dist/store/index.js';

const store = await MessageStore.open({ storePath: process.argv[2], mappedFileSizeCommitLog: 65536 });
process.stdout.write(`READY ${process.pid}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void store.shutdown().then(() => process.exit(0));
});
