/**
 * Idle connections, each with a long-polling pull the broker holds: 10,000 on the remoting listener (its
 * bound; one more is refused) and 4,000 on the HTTP listener (under its default bound of 4096). The broker
 * runs in a child process of its own with gc exposed, so its heap is measured alone: it holds them all,
 * releases every held pull when the clients disconnect, and its heap returns to the baseline taken before.
 * The figures (heap, RSS) are printed.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RequestCode, ResponseCode, buildPullSysFlag, encodeFrame } from '../../../src/protocol/index.js';
import { encodeRemotingCommand } from '../../../src/remoting/remoting-command.js';
import { TestBrokerClient, uniqueName } from '../../support/broker-client.js';
import { tempStorePath, waitFor } from '../../support/broker-fixture.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const MiB = 1024 * 1024;
const WARM = 1200;

interface MemReport {
  heapUsed: number;
  rss: number;
  external: number;
  arrayBuffers: number;
  httpConnections: number;
  remotingConnections: number;
  heldPulls: number;
}

/** The broker child: `mem()` asks it for a report after garbage collection. */
class MemoryBroker {
  readonly child: ChildProcessWithoutNullStreams;
  readonly addresses: Promise<{ http: string; remoting: string }>;
  private readonly waiting: Array<(r: MemReport) => void> = [];
  private readonly exited: Promise<unknown>;

  constructor(storePath: string) {
    this.child = spawn(
      process.execPath,
      ['--expose-gc', path.join(here, '../../support/memory-broker-child.mjs'), storePath],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    this.exited = new Promise((r) => this.child.on('exit', r));
    let buffered = '';
    let stderr = '';
    this.child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    this.addresses = new Promise((resolve, reject) => {
      this.child.on('exit', (code) => reject(new Error(`memory broker exited ${code}: ${stderr}`)));
      this.child.stdout.on('data', (d: Buffer) => {
        buffered += d.toString();
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (line.startsWith('READY ')) resolve(JSON.parse(line.slice(6)) as { http: string; remoting: string });
          else if (line.startsWith('MEM ')) this.waiting.shift()?.(JSON.parse(line.slice(4)) as MemReport);
        }
      });
    });
  }

  mem(): Promise<MemReport> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.child.stdin.write('mem\n');
    });
  }

  /** Polls reports until `cond` holds; resolves with the last one. */
  async memUntil(cond: (r: MemReport) => boolean, timeoutMs: number): Promise<MemReport> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await this.mem();
      if (cond(r)) return r;
      if (Date.now() > deadline) throw new Error(`memory broker state not reached: ${JSON.stringify(r)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  async close(): Promise<void> {
    this.child.stdin.end();
    await this.exited;
  }
}

/** Opens `count` connections to host:port, each writing `first` once open (see idle-connections-child.mjs). */
function idleClients(address: string, count: number, first: Buffer): { done(): Promise<void>; out(): string } {
  const i = address.lastIndexOf(':');
  const child = spawn(
    process.execPath,
    [
      path.join(here, '../../support/idle-connections-child.mjs'),
      address.slice(0, i),
      address.slice(i + 1),
      String(count),
      first.toString('base64'),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise((r) => child.on('exit', r));
  return {
    out: () => out,
    done: async () => {
      child.stdin.end();
      await exited;
    },
  };
}

const fmt = (r: MemReport): string =>
  `heap ${(r.heapUsed / MiB).toFixed(1)} MiB, rss ${(r.rss / MiB).toFixed(1)} MiB, ` +
  `external ${(r.external / MiB).toFixed(1)} MiB`;

describe('idle connections with held pulls: released on disconnect, memory back to baseline', () => {
  let storePath: string;
  let broker: MemoryBroker;
  let http: TestBrokerClient;
  let addresses: { http: string; remoting: string };
  const topic = uniqueName('IdleMem');
  const group = uniqueName('IdleMemG');

  beforeAll(async () => {
    storePath = tempStorePath('rmq-idle-mem-');
    broker = new MemoryBroker(storePath);
    addresses = await broker.addresses;
    http = new TestBrokerClient(addresses.http);
    // One message, so a pull at offset 1 waits for the next one (which never comes).
    expect((await http.send(topic, 'x', { queueId: 0 })).code).toBe(ResponseCode.SUCCESS);
  }, 30_000);

  afterAll(async () => {
    await http?.close();
    await broker?.close();
    if (storePath) rmSync(storePath, { recursive: true, force: true });
  }, 30_000);

  /**
   * Warms the path with a smaller round first (code compiled, pools filled), takes the baseline, opens
   * `held` clients that each send `first` (plus `refused` more that the bound must close), checks the
   * broker holds them and their pulls, closes them and checks everything is released and the heap is back.
   */
  const holdAndRelease = async (
    address: string,
    first: Buffer,
    connectionsOf: (r: MemReport) => number,
    held: number,
    refused: number,
  ) => {
    // Past 1,000 connections, so node:http's pool of reusable parsers (up to 1,000 kept) is full before the baseline.
    const warm = idleClients(address, WARM, first);
    await broker.memUntil((r) => connectionsOf(r) === WARM && r.heldPulls === WARM, 60_000);
    await warm.done();
    const base = await broker.memUntil((r) => connectionsOf(r) === 0 && r.heldPulls === 0, 30_000);

    const clients = idleClients(address, held + refused, first);
    let peak: MemReport;
    try {
      await waitFor(() => clients.out().includes(`connected ${held + refused}`), 90_000);
      peak = await broker.memUntil((r) => connectionsOf(r) === held && r.heldPulls === held, 90_000);
      await waitFor(() => (clients.out().match(/dropped/g) ?? []).length === refused, 10_000);
      expect(connectionsOf(await broker.mem())).toBe(held);
    } finally {
      await clients.done();
    }
    await broker.memUntil((r) => connectionsOf(r) === 0 && r.heldPulls === 0, 60_000);
    const grown = peak.heapUsed - base.heapUsed;
    // The held connections are visible in the heap, and what they took is given back (within a few MiB)
    // once the closes have been processed.
    expect(grown).toBeGreaterThan(10 * MiB);
    const bound = Math.max(4 * MiB, grown * 0.1);
    let after: MemReport | undefined;
    try {
      after = await broker.memUntil((r) => r.heapUsed - base.heapUsed < bound, 30_000);
    } finally {
      process.stdout.write(
        `${address}: baseline ${fmt(base)}; ${held} held: ${fmt(peak)}; after close: ${after ? fmt(after) : 'not back'}\n`,
      );
    }
    // The listener still serves.
    const again = idleClients(address, 1, first);
    try {
      await broker.memUntil((r) => connectionsOf(r) === 1 && r.heldPulls === 1, 20_000);
    } finally {
      await again.done();
    }
  };

  test('remoting listener: 10,000 held, one more refused', async () => {
    const pull = encodeRemotingCommand({
      code: RequestCode.PULL_MESSAGE,
      opaque: 1,
      extFields: {
        consumerGroup: group,
        topic,
        queueId: '0',
        queueOffset: '1',
        maxMsgNums: '32',
        sysFlag: String(buildPullSysFlag(false, true, true)),
        commitOffset: '0',
        suspendTimeoutMillis: '100000',
        subscription: '*',
        subVersion: '0',
        expressionType: 'TAG',
      },
    });
    await holdAndRelease(addresses.remoting, pull, (r) => r.remotingConnections, 10_000, 1);
  }, 240_000);

  test('HTTP listener: 4,000 held', async () => {
    const body = encodeFrame(
      {
        consumerGroup: group,
        topic,
        queueId: 0,
        queueOffset: 1,
        maxMsgNums: 32,
        sysFlag: buildPullSysFlag(false, true, true),
        commitOffset: 0,
        suspendTimeoutMillis: 100_000,
        subVersion: 0,
        subscription: '*',
      },
      undefined,
    );
    const host = addresses.http.replace(/^http:\/\//, '');
    const request = Buffer.concat([
      Buffer.from(
        `POST /v1/PULL_MESSAGE HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-rocketmq-command\r\n` +
          `Content-Length: ${body.length}\r\n\r\n`,
      ),
      body,
    ]);
    await holdAndRelease(host, request, (r) => r.httpConnections, 4000, 0);
  }, 240_000);
});
