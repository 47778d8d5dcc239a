// One round of the store crash test, shared by the Jest test and the soak suite: run
// store-crash-child.mjs on `dir`, SIGKILL it once it has acknowledged a random number of appends (a
// condition, not a timer: a busy machine only makes the round slower), reopen the store and check
// that every acknowledged append is there byte for byte and that reads return only valid records.
// Uses the compiled store in dist/ (built by Jest's globalSetup or `npm run build`).
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageStore } from '../../dist/store/index.js';
import { checkRecord, decodeMessage, decodeMessages } from '../../dist/common/codec/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CHILD = path.join(here, 'store-crash-child.mjs');
const QUEUES = 4;

/**
 * @param {string} dir store directory (reused across rounds)
 * @param {{ mode?: 'async' | 'sync', killAfterAcks?: number, segmentBytes?: number }} [options]
 *   killAfterAcks: kill once this many appends are acknowledged (default: random, 20 to 2000)
 * @returns {Promise<{ acknowledged: number, problems: string[], killAfterAcks: number, commitLogMax: number }>}
 */
export async function runCrashRound(dir, options = {}) {
  const killAfterAcks = options.killAfterAcks ?? 20 + Math.floor(Math.random() * 1980);
  const child = spawn(process.execPath, [CHILD, dir, String(options.segmentBytes ?? 65536), options.mode ?? 'async'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let acked = 0;
  const exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  let partial = '';
  child.stdout.setEncoding('utf8').on('data', (d) => {
    stdout += d;
    const lines = (partial + d).split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) if (l.startsWith('A ')) acked++;
    if (acked >= killAfterAcks && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const problems = [];
  const { code, signal } = await exited; // reaped: its pid is dead, so its lock is stale
  if (signal !== 'SIGKILL') problems.push(`child ended on its own (code ${code}): ${stderr.slice(0, 2000)}`);

  const acks = stdout
    .split('\n')
    .slice(0, -1) // the last piece has no newline: not a complete (acknowledged) line
    .filter((l) => l.startsWith('A '))
    .map((l) => {
      const [, offset, queueId, queueOffset, storeTimestamp, sha] = l.split(' ');
      return {
        offset: Number(offset),
        queueId: Number(queueId),
        queueOffset: Number(queueOffset),
        storeTimestamp: Number(storeTimestamp),
        sha,
      };
    });

  const store = await MessageStore.open({
    storePath: dir,
    mappedFileSizeCommitLog: options.segmentBytes ?? 65536,
    mappedFileSizeConsumeQueue: 50 * 20,
  });
  let commitLogMax = 0;
  let readBack = 0;
  let duplicates = 0;
  const bodies = new Set();
  try {
    commitLogMax = store.getCommitLogMaxOffset();
    for (const a of acks) {
      const raw = await store.lookMessageByOffsetRaw(a.offset);
      if (!raw) {
        problems.push(`acknowledged append at ${a.offset} is missing`);
        continue;
      }
      if (checkRecord(raw, 0).kind !== 'message') problems.push(`record at ${a.offset} is corrupt`);
      const m = decodeMessage(raw, 0, { checkCRC: true }).message;
      const sha = createHash('sha1')
        .update(m.body ?? Buffer.alloc(0))
        .digest('hex');
      if (
        m.queueId !== a.queueId ||
        m.queueOffset !== a.queueOffset ||
        m.storeTimestamp !== a.storeTimestamp ||
        sha !== a.sha
      ) {
        problems.push(`record at ${a.offset} differs from what was acknowledged`);
      }
    }
    // Every queue reads back as a gap-free run of valid records matching the acknowledgements.
    const byQueue = new Map(acks.map((a) => [`${a.queueId}/${a.queueOffset}`, a.offset]));
    const ackedOffsets = new Set(acks.map((a) => a.offset));
    for (let q = 0; q < QUEUES; q++) {
      const max = store.getMaxOffsetInQueue('CrashTopic', q);
      let offset = store.getMinOffsetInQueue('CrashTopic', q);
      while (offset < max) {
        const g = await store.getMessage('crash-check', 'CrashTopic', q, offset, 32);
        if (g.status !== 'FOUND') {
          problems.push(`queue ${q} offset ${offset}: ${g.status}`);
          break;
        }
        let decoded;
        try {
          decoded = decodeMessages(Buffer.concat(g.messages), { checkCRC: true });
        } catch (e) {
          problems.push(`queue ${q} offset ${offset}: corrupt record served (${e.message})`);
          break;
        }
        decoded.forEach((m, k) => {
          if (ackedOffsets.has(m.commitLogOffset)) readBack++;
          // A body long enough to hold `msg-<pid>-<i>` is unique (shorter ones are cut and may repeat).
          const body = m.body ?? Buffer.alloc(0);
          if (body.length >= 24) {
            const key = createHash('sha1').update(body).digest('hex');
            if (bodies.has(key)) duplicates++;
            bodies.add(key);
          }
          const expectedOffset = offset + k;
          if (m.queueOffset !== expectedOffset || g.queueOffsets[k] !== expectedOffset)
            problems.push(`queue ${q}: offset ${expectedOffset} out of order`);
          const acked = byQueue.get(`${q}/${expectedOffset}`);
          if (acked !== undefined && acked !== m.commitLogOffset)
            problems.push(`queue ${q} offset ${expectedOffset} names another record`);
        });
        offset = g.nextBeginOffset;
      }
    }
    for (const a of acks) {
      if (a.queueOffset >= store.getMaxOffsetInQueue('CrashTopic', a.queueId))
        problems.push(`queue ${a.queueId} lost acknowledged offset ${a.queueOffset}`);
    }
    const after = await store.putMessage({
      topic: 'CrashTopic',
      queueId: 0,
      flag: 0,
      body: Buffer.from('after-recovery'),
      properties: {},
      sysFlag: 0,
      bornTimestamp: Date.now(),
      bornHost: { ip: '127.0.0.1', port: 1 },
      reconsumeTimes: 0,
      preparedTransactionOffset: 0,
    });
    if (after.status !== 'PUT_OK' || after.physicalOffset < commitLogMax)
      problems.push(`append after recovery: ${after.status} at ${after.physicalOffset}`);
  } finally {
    await store.shutdown();
  }
  return { acknowledged: acks.length, readBack, duplicates, problems, killAfterAcks, commitLogMax };
}
