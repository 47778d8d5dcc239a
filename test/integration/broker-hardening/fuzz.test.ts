/**
 * Fuzz: 10,000+ requests over every command (well-typed headers with odd values, mutated fields, random
 * shapes, garbage frames, odd paths and methods) against the real broker over HTTP. Not one 5xx, no
 * crash, the broker serves normally afterwards, and its heap returns to where it was after a warm-up.
 * The seed is printed on failure (FUZZ_SEED=<n> repeats a run).
 */
import { getHeapSpaceStatistics, setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { Agent, request } from 'undici';
import { COMMANDS, ResponseCode, decodeFrame, encodeFrame } from '../../../src/protocol/index.js';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, type BrokerFixture } from '../../support/broker-fixture.js';
import { createFuzzer, describeCommands, seededRandom, type FuzzRequest } from '../../support/fuzz-requests.mjs';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Holding calls (pulls, POPs, watches) with a huge fuzzed hold time are abandoned by the client after this. */
const HOLD_TIMEOUT_MS = 1500;
/** Any other call: generous, the machine may be busy. */
const CALL_TIMEOUT_MS = 30_000;
const HOLDING = /PULL_MESSAGE|POP_MESSAGE|WATCH_CONSUMER_IDS|^11$|^361$|^90001$|^200050$/;

interface Tally {
  sent: number;
  byStatus: Map<number, number>;
  abandoned: number;
  problems: string[];
  commands: Set<string>;
}

async function fire(f: BrokerFixture, agent: Agent, next: () => FuzzRequest, n: number, tally: Tally) {
  let left = n;
  const worker = async (): Promise<void> => {
    while (left-- > 0) {
      const req = next();
      tally.sent++;
      tally.commands.add(req.command.split(' ')[0] ?? req.command);
      try {
        const res = await request(f.broker.address + req.path, {
          method: req.method as 'POST',
          body: req.body,
          headers: { 'content-type': 'application/x-rocketmq-command' },
          dispatcher: agent,
          signal: AbortSignal.timeout(HOLDING.test(req.command) ? HOLD_TIMEOUT_MS : CALL_TIMEOUT_MS),
        });
        const body = Buffer.from(await res.body.arrayBuffer());
        tally.byStatus.set(res.statusCode, (tally.byStatus.get(res.statusCode) ?? 0) + 1);
        if (res.statusCode >= 500) tally.problems.push(`${req.command}: HTTP ${res.statusCode} ${body.toString()}`);
        if (res.statusCode === 200) {
          const head = decodeFrame(body).header as { code?: unknown };
          if (typeof head.code !== 'number') tally.problems.push(`${req.command}: a 200 without a response code`);
        }
      } catch (e) {
        const err = e as Error & { code?: string };
        const holds = HOLDING.test(req.command);
        if ((err.name === 'TimeoutError' || err.code === 'UND_ERR_ABORTED') && holds) tally.abandoned++;
        else tally.problems.push(`${req.command}: ${err.name} ${err.code ?? ''} ${err.message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

/** Used bytes per V8 heap space: a failure says where the growth is. */
function heapSpaces(): Record<string, number> {
  return Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, s.space_used_size]));
}

/** Live handles and timers by kind: anything an earlier test file left running in this worker shows here. */
function resources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

let f: BrokerFixture;
afterAll(async () => {
  await f?.close();
});

test('10,000 fuzzed requests over every command: no 5xx, no crash, heap back to baseline', async () => {
  f = await startBroker({ autoCreateTopicLimit: 400, autoCreateSubscriptionGroupLimit: 400 });
  const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);
  const topics = [...Array.from({ length: 12 }, () => uniqueName('FZ')), 'TBW102', '%RETRY%fz', 'SCHEDULE_TOPIC_XXXX'];
  const groups = [...Array.from({ length: 12 }, () => uniqueName('fzg')), 'TBW102', 'x'.repeat(300)];
  for (const t of topics.slice(0, 4)) await f.client.send(t, 'seed message', { queueId: 0 });
  const commands = describeCommands(COMMANDS);
  const next = createFuzzer({ commands, encodeFrame, random: seededRandom(seed), topics, groups });
  const agent = new Agent({ connections: 16, pipelining: 1 });
  const tally: Tally = { sent: 0, byStatus: new Map(), abandoned: 0, problems: [], commands: new Set() };
  try {
    await fire(f, agent, next, 1000, tally); // warm-up: tables, caches and JIT settle
    gc();
    const baseline = process.memoryUsage().heapUsed;
    const spacesBefore = heapSpaces();
    const resourcesBefore = resources();
    const snapshots = process.env.FUZZ_HEAP_SNAPSHOTS; // a directory: heap snapshots before and after
    if (snapshots) writeHeapSnapshot(join(snapshots, `fuzz-${seed}-before.heapsnapshot`));
    const t0 = Date.now();
    await fire(f, agent, next, 10_000, tally);
    const elapsedMs = Date.now() - t0;
    // A second collection a turn later frees what the first one only made collectable (finalised handles).
    gc();
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    const grewMiB = (process.memoryUsage().heapUsed - baseline) / 2 ** 20;
    if (snapshots) writeHeapSnapshot(join(snapshots, `fuzz-${seed}-after.heapsnapshot`));
    const spacesAfter = heapSpaces();
    const summary = {
      seed,
      sent: tally.sent,
      elapsedMs,
      grewMiB: Math.round(grewMiB),
      abandoned: tally.abandoned,
      byStatus: Object.fromEntries(tally.byStatus),
    };
    expect({ summary, problems: tally.problems.slice(0, 10) }).toEqual({ summary, problems: [] });
    for (const c of commands) expect(tally.commands).toContain(c.name);
    expect(tally.byStatus.get(200) ?? 0).toBeGreaterThan(3000);
    // A failure names the seed and what the run did.
    if (grewMiB >= 48) {
      const bySpace = Object.fromEntries(
        Object.entries(spacesAfter).map(([space, used]) => [
          space,
          +((used - (spacesBefore[space] ?? 0)) / 2 ** 20).toFixed(1),
        ]),
      );
      const where = { bySpace, resourcesBefore, resourcesAfter: resources() };
      throw new Error(
        `the heap grew ${grewMiB.toFixed(1)} MiB, 48 at most: ${JSON.stringify({ ...summary, ...where })}`,
      );
    }
  } finally {
    await agent.close();
  }
  // Still serving.
  const topic = uniqueName('FZ');
  expect((await f.client.send(topic, 'after the fuzz')).code).toBe(ResponseCode.SUCCESS);
  const pulled = await f.client.pull({ group: 'fz-after', topic });
  expect(pulled.code).toBe(ResponseCode.SUCCESS);
}, 300_000);
