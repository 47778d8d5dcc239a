/**
 * What the suites that point RocketMQ's Java tools at the bundled broker share: one broker (port 0, a
 * temp store, its remoting port used as the name server) and one Java driver JVM of the kit's version,
 * both for the whole file, closed and removed after it. Call inside a `describeWithJava` block.
 */
import { rmSync } from 'node:fs';
import { Broker, type BrokerOptions } from '../../src/broker/index.js';
import { tempStorePath } from './broker-fixture.js';
import { DRIVER_SOURCE, JavaDriver, compileJava, javaKit, type JavaKit } from './java-client.js';
import type { KitVersion } from './rocketmq-kit.js';

export interface JavaOnBroker {
  readonly broker: Broker;
  readonly java: JavaDriver;
  /** The broker's remoting address, the Java side's name server. */
  readonly ns: string;
  readonly kit: JavaKit | undefined;
  /** The directory of the compiled Java classes. */
  readonly classes: string;
  /** Runs an mqadmin command against the broker; resolves with its output. */
  admin(...args: string[]): Promise<string>;
}

export function useJavaOnBroker(o: {
  storePrefix: string;
  version?: KitVersion;
  /** Java sources compiled with the driver. */
  sources?: string[];
  broker?: Partial<BrokerOptions>;
}): JavaOnBroker {
  const s = {} as { broker: Broker; java: JavaDriver; kit: JavaKit | undefined; classes: string; storePath: string };
  beforeAll(async () => {
    s.kit = javaKit(o.version);
    if (!s.kit) return;
    s.classes = compileJava(s.kit, [DRIVER_SOURCE, ...(o.sources ?? [])]);
    s.storePath = tempStorePath(o.storePrefix);
    s.broker = await Broker.start({ ...o.broker, storePath: s.storePath, port: 0, remotingPort: 0 });
    s.java = await JavaDriver.start(s.kit, s.classes);
  }, 60_000);
  afterAll(async () => {
    await s.java?.close();
    await s.broker?.shutdown();
    if (s.storePath) rmSync(s.storePath, { recursive: true, force: true });
    if (s.classes) rmSync(s.classes, { recursive: true, force: true });
  }, 60_000);
  const ns = (): string => s.broker.remotingAddress as string;
  return {
    get broker() {
      return s.broker;
    },
    get java() {
      return s.java;
    },
    get ns() {
      return ns();
    },
    get kit() {
      return s.kit;
    },
    get classes() {
      return s.classes;
    },
    admin: (...args) => s.java.admin(...args, '-n', ns()),
  };
}
