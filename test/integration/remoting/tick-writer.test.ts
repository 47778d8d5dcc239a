/**
 * TickWriter over a real loopback socket: frames written in one tick leave together, in order, and the
 * socket is uncorked once the tick ends (a later write is not held back).
 */
import net from 'node:net';
import { once } from 'node:events';
import { TickWriter } from '../../../src/remoting/tick-writer.js';

let server: net.Server | undefined;
let client: net.Socket | undefined;
afterEach(async () => {
  client?.destroy();
  if (server) await new Promise<void>((r) => server?.close(() => r()));
  server = client = undefined;
});

async function pair(): Promise<{ socket: net.Socket; received: () => Buffer }> {
  const chunks: Buffer[] = [];
  server = net.createServer((s) => s.on('data', (c: Buffer) => chunks.push(c)));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  client = net.connect({ host: '127.0.0.1', port });
  await once(client, 'connect');
  return { socket: client, received: () => Buffer.concat(chunks) };
}

const tick = (): Promise<void> => new Promise((r) => process.nextTick(r));

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
}

test('frames of one tick are corked together and arrive in order', async () => {
  const { socket, received } = await pair();
  const writer = new TickWriter(socket);
  const frames = Array.from({ length: 50 }, (_, i) => Buffer.from(`frame-${i};`));
  for (const f of frames) writer.write(f);
  expect(socket.writableCorked).toBe(1);
  await tick();
  expect(socket.writableCorked).toBe(0);
  const expected = Buffer.concat(frames);
  await until(() => received().length >= expected.length);
  expect(received().equals(expected)).toBe(true);
});

test('a write in a later tick goes out too (the cork never outlives its tick)', async () => {
  const { socket, received } = await pair();
  const writer = new TickWriter(socket);
  writer.write(Buffer.from('a'));
  await tick();
  writer.write(Buffer.from('b'));
  await tick();
  expect(socket.writableCorked).toBe(0);
  await until(() => received().length >= 2);
  expect(received().toString()).toBe('ab');
});
