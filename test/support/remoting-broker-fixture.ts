/**
 * One in-process broker with its remoting port for a whole test file, and raw remoting clients that are
 * closed after each test: the scaffolding the listener and operator-command suites share.
 */
import { startBroker, type BrokerFixture } from './broker-fixture.js';
import { RemotingTestClient } from './remoting-test-client.js';

export interface RemotingBrokerFixture {
  /** The running broker (set in beforeAll). */
  readonly fx: BrokerFixture;
  /** Its remoting address, `ip:port`. */
  readonly address: string;
  /** A new raw remoting client, closed after the current test. */
  connect(): Promise<RemotingTestClient>;
}

/** Registers the file's beforeAll, afterEach and afterAll hooks; call it at the top of a file or describe. */
export function useRemotingBroker(): RemotingBrokerFixture {
  let fx: BrokerFixture | undefined;
  const clients: RemotingTestClient[] = [];
  beforeAll(async () => {
    fx = await startBroker({ remotingPort: 0 });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await fx?.close();
  });
  const started = (): BrokerFixture => {
    if (!fx) throw new Error('the broker is not started yet (use the fixture inside a test)');
    return fx;
  };
  return {
    get fx() {
      return started();
    },
    get address() {
      return started().broker.remotingAddress as string;
    },
    async connect() {
      const c = await RemotingTestClient.connect(started().broker.remotingAddress as string);
      clients.push(c);
      return c;
    },
  };
}
