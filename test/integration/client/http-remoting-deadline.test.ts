/**
 * HttpRemotingClient's deadline also covers the wait for a free connection: a call queued behind a
 * busy connection fails at its own deadline (ERR_TIMEOUT), it does not wait for the connection, and
 * the pool serves the next call once the connection is free.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpRemotingClient } from '../../../src/remoting/http-remoting-client.js';
import { TransportError } from '../../../src/common/errors.js';
import { RequestCode, encodeFrame } from '../../../src/protocol/index.js';

let server: http.Server;
let base: string;
const held: http.ServerResponse[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (held.length === 0) {
        held.push(res); // the first call holds the only connection
        return;
      }
      res.writeHead(200, { 'content-type': 'application/x-rocketmq-command' });
      res.end(encodeFrame({ code: 0, header: { offset: 7 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

test('a call waiting for a connection times out at its own deadline', async () => {
  const c = new HttpRemotingClient({ connectionsPerBroker: 1 });
  const req = { code: RequestCode.GET_MAX_OFFSET, header: { topic: 'T', queueId: 0 } };
  const first = c.invoke(base, req, { timeoutMs: 10_000 });
  while (held.length === 0) await new Promise((r) => setTimeout(r, 5));
  const t0 = Date.now();
  const e = await c.invoke(base, req, { timeoutMs: 150 }).catch((x: unknown) => x);
  expect(e).toBeInstanceOf(TransportError);
  expect(e).toMatchObject({ code: 'ERR_TIMEOUT' });
  expect(Date.now() - t0).toBeLessThan(2000);
  // Free the connection: the first call is answered, and the pool goes on serving.
  const res = held[0] as http.ServerResponse;
  res.writeHead(200, { 'content-type': 'application/x-rocketmq-command' });
  res.end(encodeFrame({ code: 0, header: { offset: 1 } }));
  expect((await first).header).toEqual({ offset: 1 });
  expect((await c.invoke(base, req, { timeoutMs: 2000 })).header).toEqual({ offset: 7 });
  await c.close();
});
