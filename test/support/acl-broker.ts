/**
 * What the ACL suites share: a broker started with a plain_acl.yml in a temp dir (one per file), a
 * remoting client to it, every line the broker logs, the SEND_MESSAGE_V2 header of a plain send, and a
 * request signed with given credentials (or not signed at all).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { signExtFields, type AclCredentials } from '../../src/remoting/acl-signature.js';
import { startBroker, type BrokerFixture } from './broker-fixture.js';
import { RemotingTestClient } from './remoting-test-client.js';

/** SEND_MESSAGE_V2's short header fields for one message to `topic`. */
export const sendV2 = (topic: string): Record<string, string> => ({
  a: 'PG',
  b: topic,
  c: 'TBW102',
  d: '4',
  e: '0',
  f: '0',
  g: String(Date.now()),
  h: '0',
  j: '0',
  k: 'false',
});

export interface AclBroker {
  readonly fx: BrokerFixture;
  readonly remoting: RemotingTestClient;
  /** The temp dir holding the ACL file (removed after the file's tests). */
  readonly dir: string;
  readonly aclFile: string;
  /** Every line the broker logged, as text. */
  readonly logged: string[];
  /** A TCP request, its fields signed with `creds` when given. */
  tcp(
    code: number,
    fields: Record<string, string>,
    body: Buffer | null,
    creds?: AclCredentials,
  ): ReturnType<RemotingTestClient['request']>;
}

/** Registers beforeAll/afterAll hooks: a broker with `yaml` as its ACL file, and a remoting client to it. */
export function useAclBroker(yaml: string, prefix: string): AclBroker {
  const logged: string[] = [];
  const record = (obj: unknown, msg?: string): void => {
    logged.push(`${msg ?? ''} ${JSON.stringify(obj)}`);
  };
  const logger = { debug: record, info: record, warn: record, error: record };
  const state = {} as { fx: BrokerFixture; remoting: RemotingTestClient; dir: string; aclFile: string };
  beforeAll(async () => {
    state.dir = mkdtempSync(path.join(os.tmpdir(), prefix));
    state.aclFile = path.join(state.dir, 'plain_acl.yml');
    writeFileSync(state.aclFile, yaml);
    state.fx = await startBroker({ remotingPort: 0, aclFile: state.aclFile, logger });
    state.remoting = await RemotingTestClient.connect(state.fx.broker.remotingAddress as string);
  });
  afterAll(async () => {
    await state.remoting?.close();
    await state.fx?.close();
    if (state.dir) rmSync(state.dir, { recursive: true, force: true });
  });
  return {
    get fx() {
      return state.fx;
    },
    get remoting() {
      return state.remoting;
    },
    get dir() {
      return state.dir;
    },
    get aclFile() {
      return state.aclFile;
    },
    logged,
    tcp: (code, fields, body, creds) =>
      state.remoting.request(code, (creds ? signExtFields(fields, body, creds) : fields) as Record<string, string>, {
        body: body ?? undefined,
      }),
  };
}
