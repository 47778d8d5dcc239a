/**
 * A refused connection shows at once: the first failure to reach an address that has not answered yet
 * is logged at warn and emitted as `connectionError` by the Producer, the PushConsumer and the
 * LitePullConsumer, once per client and address (not once per retry), while the client keeps trying.
 */
import { createServer } from 'node:net';
import {
  LitePullConsumer,
  Producer,
  PushConsumer,
  StateError,
  type ConnectionErrorEvent,
} from '../../../../src/index.js';
import type { Logger } from '../../../../src/common/logger.js';
import { ConnectionErrorReporter } from '../../../../src/client/instance/connection-errors.js';

/** A port nothing listens on (taken from the OS, then released). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

async function waitFor(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

interface Line {
  obj: Record<string, unknown>;
  msg: string;
}

function recordingLogger(): Logger & { warns: Line[]; debugs: Line[] } {
  const warns: Line[] = [];
  const debugs: Line[] = [];
  const rec =
    (to: Line[]) =>
    (obj: unknown, msg?: string): void =>
      void to.push({ obj: (obj ?? {}) as Record<string, unknown>, msg: String(msg) });
  return { warns, debugs, debug: rec(debugs), info: () => undefined, warn: rec(warns), error: () => undefined };
}

let seq = 0;

test('PushConsumer: the first refusal is warned and emitted at once, once, while start() keeps retrying', async () => {
  const namesrv = `127.0.0.1:${await freePort()}`;
  const logger = recordingLogger();
  const c = new PushConsumer({
    namesrvAddr: namesrv,
    consumerGroup: `g-conn-${++seq}`,
    instanceName: `conn-${seq}`,
    startTimeoutMs: 60_000,
    logger,
  }).subscribe('T', '*');
  c.registerMessageListener(() => undefined);
  const seen: ConnectionErrorEvent[] = [];
  c.events.on('connectionError', (e) => seen.push(e));
  const began = Date.now();
  const started = c.start().catch((e: unknown) => e);
  try {
    await waitFor(() => seen.length > 0);
    expect(Date.now() - began).toBeLessThan(2000);
    expect(seen[0]?.address).toBe(namesrv);
    expect(String(seen[0]?.error)).toContain('ECONNREFUSED');
    expect(logger.warns.filter((l) => l.obj.addr === namesrv)).toHaveLength(1);
    // start() is still trying (a NameServer may be starting): several retries, still one event.
    await waitFor(() => logger.debugs.filter((l) => /trying again/.test(l.msg)).length >= 3);
    expect(seen).toHaveLength(1);
    expect(logger.warns.filter((l) => l.obj.addr === namesrv)).toHaveLength(1);
    expect(c.state).toBe('STARTING');
  } finally {
    await c.shutdown();
  }
  expect(await started).toBeInstanceOf(StateError);
});

test('Producer: a send to a dead NameServer emits connectionError once per address', async () => {
  const namesrv = `127.0.0.1:${await freePort()}`;
  const logger = recordingLogger();
  const p = new Producer({ namesrvAddr: namesrv, instanceName: `conn-p-${++seq}`, logger });
  const seen: ConnectionErrorEvent[] = [];
  p.events.on('connectionError', (e) => seen.push(e));
  await p.start();
  try {
    await expect(p.send({ topic: 'T', body: Buffer.from('x') })).rejects.toMatchObject({ code: 'ERR_TRANSPORT' });
    await expect(p.send({ topic: 'T', body: Buffer.from('y') })).rejects.toMatchObject({ code: 'ERR_TRANSPORT' });
    expect(seen.map((e) => e.address)).toEqual([namesrv]);
    expect(logger.warns.filter((l) => l.obj.addr === namesrv)).toHaveLength(1);
  } finally {
    await p.shutdown();
  }
});

test('LitePullConsumer: starting against a dead NameServer emits connectionError', async () => {
  const namesrv = `127.0.0.1:${await freePort()}`;
  const c = new LitePullConsumer({
    namesrvAddr: namesrv,
    consumerGroup: `g-conn-lite-${++seq}`,
    instanceName: `conn-l-${seq}`,
  });
  c.subscribe('T', '*');
  const seen: ConnectionErrorEvent[] = [];
  c.events.on('connectionError', (e) => seen.push(e));
  try {
    // Its start does not wait for a route (the background route refresh keeps asking): the event is
    // what shows the NameServer is not there.
    await c.start().catch(() => undefined);
    await waitFor(() => seen.length > 0);
    expect(seen.map((e) => e.address)).toEqual([namesrv]);
  } finally {
    await c.shutdown();
  }
});

test('ConnectionErrorReporter: once per client and address; a client that joins later hears at the next failure', () => {
  const heard: string[] = [];
  const client = (name: string) => ({
    connectionError: (e: ConnectionErrorEvent) => void heard.push(`${name}:${e.address}`),
  });
  const a = client('a');
  const b = client('b');
  const clients: Array<ReturnType<typeof client> | { connectionError?: undefined }> = [a, {}];
  const r = new ConnectionErrorReporter(() => clients);
  r.failed('ns:1', new Error('refused'));
  r.failed('ns:1', new Error('refused'));
  r.failed('ns:2', new Error('refused'));
  clients.push(b);
  r.failed('ns:1', new Error('refused'));
  expect(heard).toEqual(['a:ns:1', 'a:ns:2', 'b:ns:1']);
  // Once the address answered, a later failure before an answer (a new instance state) is news again.
  r.answered('ns:1');
  r.failed('ns:1', new Error('refused'));
  expect(heard.slice(3)).toEqual(['a:ns:1', 'b:ns:1']);
});
