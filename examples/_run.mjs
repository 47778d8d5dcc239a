// Shared by the examples: where the broker is, and running `main()` when a file is started directly.
import process from 'node:process';
import { pathToFileURL } from 'node:url';

/** The broker address: $ROCKETMQ_TS_ENDPOINTS, else the CLI broker's default http://127.0.0.1:8081. */
export const endpoints = process.env.ROCKETMQ_TS_ENDPOINTS ?? 'http://127.0.0.1:8081';

/** The NameServers of a RocketMQ cluster (example 10): $NAMESRV_ADDR, as RocketMQ's tools read it, else 127.0.0.1:9876. */
export const namesrvAddr = process.env.NAMESRV_ADDR ?? '127.0.0.1:9876';

/** Runs `main(endpoints)` when `moduleUrl` is the file node was started with; exits 1 on failure. */
export function runIfMain(moduleUrl, main) {
  if (process.argv[1] === undefined || pathToFileURL(process.argv[1]).href !== moduleUrl) return;
  main(endpoints).then(
    () => process.exit(0),
    (e) => {
      process.stderr.write(`${e?.stack ?? e}\n`);
      process.exit(1);
    },
  );
}

/** Resolves when `cond()` holds; rejects after `timeoutMs`. */
export async function until(cond, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
