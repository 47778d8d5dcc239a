/**
 * Shared fixtures of the file-store tests (recovery, corruption, append faults): a temp store with tiny
 * segments opened per test and shut down after it, a filler that alternates two queues, a reader that
 * drains a queue the way a consumer does, a logger that records warnings, and helpers that locate and
 * damage the store's files.
 */
import { afterEach, beforeEach, expect } from '@jest/globals';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeMessages } from '../../src/common/codec/index.js';
import type { Logger } from '../../src/common/logger.js';
import type { MessageExt } from '../../src/common/message.js';
import { MessageStore } from '../../src/store/message-store.js';
import type { MessageStoreOptions } from '../../src/store/options.js';
import type { PutMessageResult } from '../../src/store/types.js';
import { SEGMENT, TINY, msg } from '../integration/store/conformance.js';

/** Units per consume-queue file in TINY (10 units of 20 bytes). */
const CQ_UNITS = 10;

export interface TinyStores {
  /** This test's store directory (a new temp dir per test). */
  readonly dir: string;
  /** Opens a store with TINY options (plus `extra`) in `at` (the test's dir); shut down after the test. */
  open(extra?: Partial<MessageStoreOptions>, at?: string): Promise<MessageStore>;
}

/** Registers beforeEach/afterEach hooks that give each test a temp dir and close what it opened. */
export function useTinyStores(prefix: string): TinyStores {
  let dir = '';
  const stores: MessageStore[] = [];
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.shutdown();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    get dir() {
      return dir;
    },
    async open(extra = {}, at = dir) {
      const s = await MessageStore.open({ ...TINY, ...extra, storePath: at });
      stores.push(s);
      return s;
    },
  };
}

/** The body of message `i` written by `fillAlternating` (sizes vary so records straddle segments). */
export const bodyOf = (i: number): string => `m${i}-${'q'.repeat(i % 40)}`;

/** Writes `n` messages alternating between queues 0 and 1, one at a time. */
export async function fillAlternating(s: MessageStore, topic: string, n: number): Promise<PutMessageResult[]> {
  const out: PutMessageResult[] = [];
  for (let i = 0; i < n; i++) out.push(await s.putMessage(msg(topic, bodyOf(i), { queueId: i % 2 })));
  return out;
}

/** The bodies `fillAlternating(n)` wrote to `queueId`, leaving out the message numbers in `except`. */
export const bodiesOf = (n: number, queueId: number, except: number[] = []): string[] =>
  [...Array(n).keys()].filter((i) => i % 2 === queueId && !except.includes(i)).map(bodyOf);

/**
 * Every message of a queue as a consumer reads it: from the min offset, following nextBeginOffset, every
 * CRC checked. With `requireFound`, every pull must answer FOUND.
 */
export async function drainQueue(
  s: MessageStore,
  topic: string,
  queueId: number,
  requireFound = false,
): Promise<MessageExt[]> {
  const out: MessageExt[] = [];
  let offset = s.getMinOffsetInQueue(topic, queueId);
  for (let guard = 0; offset < s.getMaxOffsetInQueue(topic, queueId) && guard < 1000; guard++) {
    const g = await s.getMessage('G', topic, queueId, offset, 32);
    if (requireFound) expect(g.status).toBe('FOUND');
    out.push(...decodeMessages(Buffer.concat(g.messages), { checkCRC: true }));
    offset = g.nextBeginOffset;
  }
  return out;
}

/** The bodies of `drainQueue`, as strings. */
export async function drainBodies(s: MessageStore, topic: string, queueId: number): Promise<string[]> {
  return (await drainQueue(s, topic, queueId)).map((m) => (m.body as Buffer).toString());
}

/** The commit-log segment file holding `offset` (TINY segments). */
export const segFile = (dir: string, offset: number): string =>
  path.join(dir, 'commitlog', String(offset - (offset % SEGMENT)).padStart(20, '0'));

/** The consume-queue file holding unit `queueOffset` (TINY files). */
export const cqFile = (dir: string, topic: string, queueId: number, queueOffset: number): string =>
  path.join(
    dir,
    'consumequeue',
    topic,
    String(queueId),
    String((queueOffset - (queueOffset % CQ_UNITS)) * 20).padStart(20, '0'),
  );

export type SpyLogger = Logger & { warnings: { msg: string; obj: Record<string, unknown> }[] };

/** A logger that records warnings and errors (message and fields). */
export function spyLogger(): SpyLogger {
  const warnings: { msg: string; obj: Record<string, unknown> }[] = [];
  const push = (o: unknown, m?: string): void =>
    void warnings.push({ msg: m ?? '', obj: o as Record<string, unknown> });
  return { warnings, debug: () => {}, info: () => {}, warn: push, error: push };
}

/** XORs the byte at `at` of `file` with `mask`. */
export function flip(file: string, at: number, mask = 0xff): void {
  const fd = fs.openSync(file, 'r+');
  try {
    const b = Buffer.alloc(1);
    fs.readSync(fd, b, 0, 1, at);
    b[0] = (b[0] as number) ^ mask;
    fs.writeSync(fd, b, 0, 1, at);
  } finally {
    fs.closeSync(fd);
  }
}
