// Long version of test/integration/store/corruption.test.ts: SOAK_ROUNDS (default 60) rounds of random
// damage to a store with tiny segments (4 KiB log segments, 10-unit queue files): a flipped byte in a
// random record (after a clean stop or a crash), a flipped bit in a random consume-queue unit, a queue
// file cut short by whole units, a flipped bit in a record header field outside the body CRC (after a
// clean stop or a crash). After reopening, every queue is consumed with CRC checks: no damaged
// record may be served, and no valid message may be lost (only the record hit by the damage may be).
// Needs dist/ (`npm run soak` builds it).
import { Buffer } from 'node:buffer';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MessageStore } from '../../dist/store/index.js';
import { decodeMessages } from '../../dist/common/codec/index.js';

const rounds = Number(process.env.SOAK_ROUNDS ?? 60);
const SEG = 4096;
const OPTS = { mappedFileSizeCommitLog: SEG, mappedFileSizeConsumeQueue: 200 };
const N = 300;
const QUEUES = 3;
const rnd = (n) => Math.floor(Math.random() * n);
const totals = new Map();
let failed = 0;

function flip(file, at, mask) {
  const fd = fs.openSync(file, 'r+');
  const b = Buffer.alloc(1);
  fs.readSync(fd, b, 0, 1, at);
  b[0] ^= mask;
  fs.writeSync(fd, b, 0, 1, at);
  fs.closeSync(fd);
}

for (let round = 1; round <= rounds; round++) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-soak-corrupt-'));
  const kind = [
    'log byte, clean stop',
    'log byte, crash',
    'queue unit bit',
    'queue cut short',
    'log header bit, clean stop',
    'log header bit, crash',
  ][round % 6];
  try {
    const s = await MessageStore.open({ ...OPTS, storePath: dir });
    const sent = [];
    for (let i = 0; i < N; i++) {
      const body = `r${round}-m${i}-${'x'.repeat(rnd(120))}`;
      const r = await s.putMessage({
        topic: 'SoakT',
        queueId: i % QUEUES,
        flag: 0,
        body: Buffer.from(body),
        properties: { TAGS: 't' },
        sysFlag: 0,
        bornTimestamp: Date.now(),
        bornHost: { ip: '127.0.0.1', port: 1 },
        reconsumeTimes: 0,
        preparedTransactionOffset: 0,
      });
      sent.push({ body, ...r, queueId: i % QUEUES });
    }
    await s.shutdown();
    let victim = null;
    if (kind.startsWith('log')) {
      victim = sent[rnd(N)];
      const file = path.join(
        dir,
        'commitlog',
        String(victim.physicalOffset - (victim.physicalOffset % SEG)).padStart(20, '0'),
      );
      // A header bit: queue id, flag, queue offset, sysFlag, timestamps and hosts (bytes 12-83), all
      // outside the body CRC; else any byte of the record.
      const at = kind.startsWith('log header') ? 12 + rnd(72) : rnd(victim.wroteBytes);
      flip(file, (victim.physicalOffset % SEG) + at, 1 << rnd(8));
      if (kind.endsWith('crash')) fs.writeFileSync(path.join(dir, 'abort'), '1\n');
    } else {
      const q = rnd(QUEUES);
      const qdir = path.join(dir, 'consumequeue', 'SoakT', String(q));
      const files = fs.readdirSync(qdir).sort();
      const file = path.join(qdir, files[rnd(files.length)]);
      const units = fs.statSync(file).size / 20;
      if (kind === 'queue unit bit') flip(file, rnd(units) * 20 + rnd(12), 1 << rnd(8));
      else fs.truncateSync(file, rnd(units) * 20);
    }
    const again = await MessageStore.open({ ...OPTS, storePath: dir });
    const seen = new Map();
    let corrupt = 0;
    for (let q = 0; q < QUEUES; q++) {
      let offset = again.getMinOffsetInQueue('SoakT', q);
      for (let guard = 0; offset < again.getMaxOffsetInQueue('SoakT', q) && guard < 10_000; guard++) {
        const g = await again.getMessage('G', 'SoakT', q, offset, 32);
        try {
          for (const m of decodeMessages(Buffer.concat(g.messages), { checkCRC: true })) {
            const b = m.body.toString();
            seen.set(b, (seen.get(b) ?? 0) + 1);
          }
        } catch {
          corrupt++;
        }
        offset = g.nextBeginOffset;
      }
    }
    await again.shutdown();
    const lost = sent.filter((m) => !seen.has(m.body) && m !== victim).length;
    const duplicates = [...seen.values()].reduce((a, n) => a + n - 1, 0);
    const consumed = [...seen.values()].reduce((a, n) => a + n, 0);
    const t = totals.get(kind) ?? { runs: 0, sent: 0, consumed: 0, lost: 0, duplicates: 0, corrupt: 0, victims: 0 };
    t.runs++;
    t.sent += N;
    t.consumed += consumed;
    t.lost += lost;
    t.duplicates += duplicates;
    t.corrupt += corrupt;
    if (victim && !seen.has(victim.body)) t.victims++;
    totals.set(kind, t);
    const ok = lost === 0 && duplicates === 0 && corrupt === 0;
    if (!ok) failed++;
    console.log(
      `round ${round}/${rounds} ${kind}: lost ${lost}, duplicates ${duplicates}, corrupt served ${corrupt} ${ok ? 'ok' : 'FAILED'}`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
for (const [kind, t] of totals) {
  console.log(
    `SOAK ${JSON.stringify({
      scenario: `store corruption: ${kind}`,
      runs: t.runs,
      sent: t.sent,
      acknowledged: t.sent,
      consumed: t.consumed,
      lost: t.lost,
      duplicates: t.duplicates,
      notes: `${t.corrupt} damaged records served; ${t.victims} messages hit by the damage itself not delivered (not counted as lost)`,
    })}`,
  );
}
process.exit(failed === 0 ? 0 : 1);
