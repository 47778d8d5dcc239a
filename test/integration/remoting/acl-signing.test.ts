/**
 * Both transports sign every request they send with the client's credentials (oneway ones too), as
 * RocketMQ's AclClientRPCHook does, and the signature a test server recomputes from what it received
 * matches; a credentials function that throws, rejects, hangs or returns junk fails the request
 * before anything is sent; a broker's AclException answer becomes an AclAccessDeniedError.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { AclAccessDeniedError, CredentialsError, RocketMQError } from '../../../src/common/errors.js';
import { RequestCode, ResponseCode, decodeFrame, encodeFrame } from '../../../src/protocol/index.js';
import { Credentials, aclFieldsOfHeader, type CredentialsSource } from '../../../src/remoting/acl-credentials.js';
import { aclSignature, aclSignedContent } from '../../../src/remoting/acl-signature.js';
import { HttpRemotingClient } from '../../../src/remoting/http-remoting-client.js';
import type { RemotingClient } from '../../../src/remoting/remoting-client.js';
import { TcpRemotingClient } from '../../../src/remoting/tcp-remoting-client.js';
import type { ExtFields } from '../../../src/remoting/remoting-command-model.js';
import { RemotingTestServer, waitFor } from '../../support/remoting-test-server.js';

const SECRETS: Record<string, string> = { appUser: 'appSecret123', other: 'otherSecret456' };
const SIGNED_AS = { accessKey: 'appUser', secretKey: 'appSecret123' };
const DENIED_REMARK =
  'org.apache.rocketmq.acl.common.AclException: No default permission for topic:Secret, ' +
  'org.apache.rocketmq.acl.plain.PlainPermissionManager.checkPerm(PlainPermissionManager.java:611)';

/** What a server received, in the form the ACL signs: the fields and the body. */
interface Received {
  code: number;
  fields: ExtFields;
  body: Buffer | null;
}

/** Whether `r` carries a valid signature of one of the known accounts. */
function validSignature(r: Received): boolean {
  const ak = r.fields.AccessKey;
  const secret = ak ? SECRETS[ak] : undefined;
  if (!secret || !r.fields.Signature) return false;
  return aclSignature(aclSignedContent(r.fields, r.body), secret) === r.fields.Signature;
}

interface Harness {
  kind: string;
  addr: string;
  received: Received[];
  /** The remark of the next answers (SYSTEM_ERROR when set). */
  refuseWith: string | undefined;
  client(credentials: CredentialsSource | undefined): RemotingClient;
  close(): Promise<void>;
}

const clients: RemotingClient[] = [];

async function tcpHarness(): Promise<Harness> {
  const h: Partial<Harness> & { received: Received[] } = { kind: 'tcp', received: [], refuseWith: undefined };
  const server = await RemotingTestServer.start((cmd) => {
    h.received.push({ code: cmd.code, fields: cmd.extFields ?? {}, body: cmd.body });
    return h.refuseWith
      ? { code: ResponseCode.SYSTEM_ERROR, remark: h.refuseWith }
      : { code: ResponseCode.SUCCESS, extFields: { offset: '7' } };
  });
  return Object.assign(h, {
    addr: server.addr,
    client: (credentials: CredentialsSource | undefined) => {
      const c = new TcpRemotingClient({
        closeTimeoutMs: 1000,
        credentials: credentials === undefined ? undefined : new Credentials(credentials),
      });
      clients.push(c);
      return c;
    },
    close: () => server.close(),
  }) as Harness;
}

async function httpHarness(): Promise<Harness> {
  const h: Partial<Harness> & { received: Received[] } = { kind: 'http', received: [], refuseWith: undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const f = decodeFrame(Buffer.concat(chunks));
      const header = f.header as Record<string, unknown>;
      h.received.push({
        code: 0,
        fields: aclFieldsOfHeader(header),
        body: f.body ?? null,
      });
      const answer = h.refuseWith
        ? { code: ResponseCode.SYSTEM_ERROR, remark: h.refuseWith, header: {} }
        : { code: ResponseCode.SUCCESS, header: { offset: 7 } };
      res.writeHead(200, { 'content-type': 'application/x-rocketmq-command' });
      res.end(encodeFrame(answer));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return Object.assign(h, {
    addr: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    client: (credentials: CredentialsSource | undefined) => {
      const c = new HttpRemotingClient({
        closeTimeoutMs: 1000,
        credentials: credentials === undefined ? undefined : new Credentials(credentials),
      });
      clients.push(c);
      return c;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  }) as Harness;
}

const maxOffset = { code: RequestCode.GET_MAX_OFFSET, header: { topic: 'T', queueId: 3 } };
/** A send with a body: over TCP as SEND_MESSAGE_V2 (RocketMQ's one-letter fields), over HTTP as SEND_MESSAGE. */
const withBody = (kind: string) => ({
  code: kind === 'tcp' ? RequestCode.SEND_MESSAGE_V2 : RequestCode.SEND_MESSAGE,
  header: {
    producerGroup: 'pg',
    topic: 'T',
    defaultTopic: 'TBW102',
    defaultTopicQueueNums: 4,
    queueId: 0,
    sysFlag: 0,
    bornTimestamp: 1,
    flag: 0,
    properties: 'KEYS\u0001k\u0002',
    reconsumeTimes: 0,
    unitMode: false,
    batch: false,
  },
  body: Buffer.from('héllo body'),
});

describe.each([
  ['tcp', tcpHarness],
  ['http', httpHarness],
])('%s transport signing', (_kind, make) => {
  let h: Harness;
  beforeAll(async () => {
    h = await make();
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    h.received.length = 0;
    h.refuseWith = undefined;
  });
  afterAll(() => h.close());

  test('no credentials: nothing ACL is added', async () => {
    await h.client(undefined).invoke(h.addr, maxOffset, { timeoutMs: 3000 });
    expect(h.received[0]?.fields.AccessKey).toBeUndefined();
    expect(h.received[0]?.fields.Signature).toBeUndefined();
  });

  test('fixed credentials sign each request (header and body) and the server can verify it', async () => {
    const c = h.client({ accessKey: 'appUser', secretKey: 'appSecret123' });
    await c.invoke(h.addr, maxOffset, { timeoutMs: 3000 });
    await c.invoke(h.addr, withBody(h.kind), { timeoutMs: 3000 });
    expect(h.received).toHaveLength(2);
    for (const r of h.received) {
      expect(r.fields.AccessKey).toBe('appUser');
      expect(r.fields.SecurityToken).toBeUndefined();
      expect(validSignature(r)).toBe(true);
    }
    // The body takes part: the same fields with another body do not verify.
    const sent = h.received[1] as Received;
    expect(validSignature({ ...sent, body: Buffer.from('other body') })).toBe(false);
  });

  test('oneway requests are signed too', async () => {
    const c = h.client({ accessKey: 'appUser', secretKey: 'appSecret123', securityToken: 'sts-token' });
    await c.invokeOneway(h.addr, maxOffset, { timeoutMs: 3000 });
    await waitFor(() => h.received.length === 1, 5000, 'the oneway request');
    const r = h.received[0] as Received;
    expect(r.fields.SecurityToken).toBe('sts-token');
    expect(validSignature(r)).toBe(true);
  });

  test('a credentials function is asked for every request: rotation takes effect at once', async () => {
    let current = { accessKey: 'appUser', secretKey: 'appSecret123' };
    let calls = 0;
    const c = h.client(async () => {
      calls++;
      return current;
    });
    await c.invoke(h.addr, maxOffset, { timeoutMs: 3000 });
    current = { accessKey: 'other', secretKey: 'otherSecret456' };
    await c.invoke(h.addr, maxOffset, { timeoutMs: 3000 });
    expect(calls).toBe(2);
    expect(h.received.map((r) => r.fields.AccessKey)).toEqual(['appUser', 'other']);
    expect(h.received.every(validSignature)).toBe(true);
  });

  test.each<[string, () => unknown, RegExp, boolean]>([
    [
      'throws',
      () => {
        throw new Error('vault down: appSecret123');
      },
      /threw/,
      true,
    ],
    ['rejects', () => Promise.reject(new Error('sts down')), /rejected/, true],
    ['hangs', () => new Promise(() => undefined), /did not answer within 200 ms/, true],
    ['returns junk', () => ({ accessKey: 'appUser' }), /secretKey must be a non-empty string/, false],
  ])(
    'a credentials function that %s fails the request with CredentialsError; nothing is sent',
    async (_n, fn, message, retriable) => {
      const c = h.client(fn as () => { accessKey: string; secretKey: string });
      const err = await c.invoke(h.addr, maxOffset, { timeoutMs: 200 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(CredentialsError);
      expect((err as CredentialsError).code).toBe('ERR_CREDENTIALS');
      expect((err as CredentialsError).retriable).toBe(retriable);
      expect((err as Error).message).toMatch(message);
      expect((err as Error).message).not.toContain('appSecret123');
      await c.invokeOneway(h.addr, maxOffset, { timeoutMs: 200 });
      expect(h.received).toHaveLength(0);
    },
  );

  test("a broker's AclException answer is a non-retriable AclAccessDeniedError naming account and resource", async () => {
    h.refuseWith = DENIED_REMARK;
    const c = h.client({ accessKey: 'appUser', secretKey: 'appSecret123' });
    const err = await c.invoke(h.addr, withBody(h.kind), { timeoutMs: 3000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AclAccessDeniedError);
    const e = err as AclAccessDeniedError;
    expect(e).toBeInstanceOf(RocketMQError);
    expect(e).toMatchObject({
      code: 'ERR_ACL_ACCESS_DENIED',
      retriable: false,
      responseCode: ResponseCode.SYSTEM_ERROR,
      accessKey: 'appUser',
      resource: 'topic:Secret',
      reason: 'No default permission for topic:Secret',
      address: h.addr,
    });
    expect(e.message).toContain('appUser');
    expect(e.message).toContain('topic:Secret');
    expect(e.message).not.toContain('appSecret123');
    expect(inspect(e)).not.toContain('appSecret123');
  });

  test('any other SYSTEM_ERROR stays an answer', async () => {
    h.refuseWith = 'java.lang.NullPointerException, a.b.C.m(C.java:1)';
    const res = await h.client(undefined).invoke(h.addr, maxOffset, { timeoutMs: 3000 });
    expect(res.code).toBe(ResponseCode.SYSTEM_ERROR);
  });
});

describe('requests the broker sends', () => {
  test("the client's answers to them are not signed (as in RocketMQ)", async () => {
    const server = await RemotingTestServer.start(() => ({ code: ResponseCode.SUCCESS, extFields: { offset: '1' } }));
    const c = new TcpRemotingClient({ closeTimeoutMs: 1000, credentials: new Credentials({ ...SIGNED_AS }) });
    try {
      c.onServerRequest(RequestCode.GET_CONSUMER_RUNNING_INFO, () => ({
        code: ResponseCode.SUCCESS,
        extFields: { a: '1' },
      }));
      await c.invoke(server.addr, maxOffset, { timeoutMs: 3000 });
      expect(server.received[0]?.extFields?.Signature).toBeDefined();
      server.sendToClients({
        code: RequestCode.GET_CONSUMER_RUNNING_INFO,
        opaque: 77,
        extFields: { consumerGroup: 'g' },
      });
      await waitFor(() => server.responses.length === 1, 5000, 'the answer');
      expect(server.responses[0]?.extFields).toEqual({ a: '1' });
    } finally {
      await c.close();
      await server.close();
    }
  });
});
