/**
 * The client instance's transport, reached only through the RemotingClient interface: the options
 * pick TCP or HTTP, and the server-request side exists exactly when the transport offers
 * registerProcessor (TCP), whatever its class.
 */
import { jest } from '@jest/globals';
import { resolveProducerOptions } from '../../../../src/client/producer/producer-options.js';
import { createRemotingClient, serverRequestHost } from '../../../../src/client/instance/transport.js';
import type { RemotingClient, ServerRequestProcessor } from '../../../../src/remoting/remoting-client.js';

const opened: RemotingClient[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((r) => r.close()));
});

function transportFor(options: Parameters<typeof resolveProducerOptions>[0]): RemotingClient {
  const r = createRemotingClient(resolveProducerOptions(options));
  opened.push(r);
  return r;
}

const bare = (): RemotingClient => ({
  invoke: () => Promise.reject(new Error('unused')),
  invokeOneway: () => Promise.resolve(),
  close: () => Promise.resolve(),
});

test('namesrvAddr gives a transport brokers can send requests over; endpoints gives one they cannot', () => {
  expect(serverRequestHost(transportFor({ namesrvAddr: '127.0.0.1:9876' }))).toBeDefined();
  expect(serverRequestHost(transportFor({ endpoints: 'http://127.0.0.1:8081' }))).toBeUndefined();
});

test('a transport without registerProcessor has no server-request side', () => {
  expect(serverRequestHost(bare())).toBeUndefined();
});

test('the server-request side registers through registerProcessor and hands back its unregister function', () => {
  const unregister = jest.fn();
  const registered: Array<[number, ServerRequestProcessor]> = [];
  const remoting: RemotingClient = {
    ...bare(),
    registerProcessor(code, processor) {
      registered.push([code, processor]);
      return unregister;
    },
  };
  const processor: ServerRequestProcessor = () => Promise.resolve(undefined);
  const off = serverRequestHost(remoting)?.onServerRequest(34, processor);
  expect(registered).toEqual([[34, processor]]);
  off?.();
  expect(unregister).toHaveBeenCalledTimes(1);
});
