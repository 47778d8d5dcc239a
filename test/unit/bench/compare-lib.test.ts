import path from 'node:path';
import {
  SeqCounter,
  UsageError,
  brokerAddresses,
  xreadgroupArgs,
  cpuTicksFromStat,
  findKitDir,
  formatTable,
  latencySummary,
  median,
  parseArgs,
  parseJavaDrain,
  parseJavaLatency,
  percentile,
  ppidFromStat,
  secondHalfRate,
  statusBytes,
  summarise,
} from '../../../bench/compare-lib.mjs';

describe('comparison harness: pure helpers', () => {
  test('parseArgs: defaults, every flag, and a clear error naming the bad flag', () => {
    const d = parseArgs([]);
    expect(d).toMatchObject({
      messages: 200_000,
      rounds: 3,
      rate: 2000,
      seconds: 20,
      bodyBytes: 1024,
      liteLoop: 'iter',
      sendsFrom: 'ready',
    });
    expect(d.only).toHaveLength(10);
    const o = parseArgs(
      '--messages 20000 --rounds 2 --only redis-streams,ours-http-push --rate 500 --seconds 5 --lite-loop poll --no-results'.split(
        ' ',
      ),
    );
    expect(o).toMatchObject({
      messages: 20000,
      rounds: 2,
      rate: 500,
      seconds: 5,
      liteLoop: 'poll',
      writeResults: false,
    });
    expect(o.only).toEqual(['ours-http-push', 'redis-streams']); // table order, not command-line order
    expect(() => parseArgs(['--messages', '0'])).toThrow(/--messages must be an integer >= 1, got '0'/);
    expect(() => parseArgs(['--rounds'])).toThrow(/--rounds must be an integer >= 1, got nothing/);
    expect(() => parseArgs(['--only', 'kafka'])).toThrow(/--only: unknown system\(s\) 'kafka'/);
    expect(() => parseArgs(['--lite-loop', 'x'])).toThrow(UsageError);
    expect(parseArgs(['--sends-from', 'start']).sendsFrom).toBe('start');
    expect(() => parseArgs(['--sends-from', 'now'])).toThrow(/--sends-from must be 'ready' or 'start', got 'now'/);
    expect(() => parseArgs(['--fast'])).toThrow(/unknown argument '--fast'/);
    expect(parseArgs(['--help']).help).toBe(true);
  });

  test('percentile (nearest rank), latencySummary and median', () => {
    const v = Array.from({ length: 1000 }, (_, i) => i + 1);
    expect(percentile(v, 50)).toBe(500);
    expect(percentile(v, 99)).toBe(990);
    expect(percentile(v, 99.9)).toBe(999);
    expect(percentile(v, 100)).toBe(1000);
    expect(percentile([7], 99.9)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
    const s = latencySummary([5, 1, 4, 2, 3]);
    expect(s).toEqual({ n: 5, p50: 3, p99: 5, p999: 5, max: 5 });
    expect(latencySummary([]).max).toBeNaN();
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([NaN, 5, undefined as unknown as number])).toBe(5);
    expect(median([])).toBeNaN();
  });

  test('SeqCounter counts duplicates and missing sequences, also merged across processes', () => {
    const a = new SeqCounter(10);
    for (const s of [0, 1, 2, 2, 3]) a.add(s);
    expect(a.add(3)).toBe(false);
    expect(a.add(4)).toBe(true);
    a.add(42); // a stranger: counted apart, never as a sequence
    expect(a.summary()).toEqual({ distinct: 5, missing: 5, duplicates: 2, outOfRange: 1 });
    const b = new SeqCounter(10);
    for (const s of [4, 5, 6, 7, 8, 9]) b.add(s);
    const merged = new SeqCounter(10);
    merged.merge(a.toBase64());
    merged.merge(b.counts);
    expect(merged.summary()).toEqual({ distinct: 10, missing: 0, duplicates: 3, outOfRange: 0 });
    expect(merged.deliveries).toBe(13);
    expect(() => merged.merge(new Uint8Array(3))).toThrow(RangeError);
  });

  test('reads /proc stat and status lines', () => {
    // A command name with spaces and a parenthesis must not shift the fields.
    const stat = '4242 (node (worker) x) S 17 4242 17 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 11 0 5 0 0';
    expect(cpuTicksFromStat(stat)).toBe(325);
    expect(ppidFromStat(stat)).toBe(17);
    expect(() => cpuTicksFromStat('garbage')).toThrow(/stat/);
    const status = 'Name:\tnode\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n';
    expect(statusBytes(status, 'VmRSS')).toBe(100 * 1048576);
    expect(statusBytes(status, 'VmHWM')).toBe(200 * 1048576);
    expect(statusBytes(status, 'VmSwap')).toBeNaN();
  });

  test('reads the figures the kit’s Drain.java prints', () => {
    const drain = [
      'preload: 20000 x 1024 B into DRAIN_1 (8 queues) in 3.00 s = 6667 msg/s (4 sync-send threads), failed=0',
      'drain: complete distinct=20000 deliveries=20032 maxBatch=32',
      'drain: 1.50 s from consumer.start() = 13333 msg/s; 0.80 s first-to-last delivery = 25000 msg/s (24.4 MiB/s)',
    ].join('\n');
    expect(parseJavaDrain(drain)).toEqual({
      preloadFailed: 0,
      complete: true,
      distinct: 20000,
      deliveries: 20032,
      msgPerS: 25000,
      msgPerSFromStart: 13333,
    });
    expect(parseJavaDrain('preload: only')).toBeUndefined();
    const lat =
      'publish->listener all (n=10000): p50=2.980 ms p90=5.000 ms p99=22.100 ms p99.9=40.000 ms max=67.200 ms\n' +
      'publish->listener after first 2 s (n=6000): p50=1.000 ms p90=2.000 ms p99=3.000 ms p99.9=4.000 ms max=5.000 ms';
    expect(parseJavaLatency(lat)).toEqual({ n: 10000, p50: 2.98, p99: 22.1, p999: 40, max: 67.2 });
    expect(parseJavaLatency('no samples')).toBeUndefined();
  });

  test('findKitDir: RMQ_KIT_DIR first, else shared/rocketmq-java beside a parent folder', () => {
    expect(findKitDir('/a/b/repo', '/opt/kit', () => false)).toBe(path.resolve('/opt/kit'));
    const present = new Set(['/a/shared/rocketmq-java']);
    expect(findKitDir('/a/b/repo', undefined, (p: string) => present.has(p))).toBe('/a/shared/rocketmq-java');
    expect(findKitDir('/a/b/repo', undefined, () => false)).toBe('/a/b/shared/rocketmq-java');
  });

  test('findKitDir: the 5.3.3 kit is found the same way under its own folder name', () => {
    const present = new Set(['/a/shared/rocketmq-java', '/a/shared/rocketmq5-java']);
    expect(findKitDir('/a/b/repo', undefined, (p: string) => present.has(p), 'rocketmq5-java')).toBe(
      '/a/shared/rocketmq5-java',
    );
    expect(findKitDir('/a/b/repo', '/opt/kit5', () => false, 'rocketmq5-java')).toBe(path.resolve('/opt/kit5'));
    expect(findKitDir('/a/b/repo', undefined, () => false, 'rocketmq5-java')).toBe('/a/b/shared/rocketmq5-java');
  });

  test('summarise takes per-system medians and ratios within a round; the table shows them and skips', () => {
    const drain = (msgPerS: number, duplicates = 0) => ({
      msgPerS,
      secondHalfMsgPerS: msgPerS * 2,
      duplicates,
      missing: 0,
      consumerCpuUsPerMsg: 10,
      brokerCpuUsPerMsg: 5,
      consumerRssBytes: 100 * 1048576,
    });
    const runs = [
      {
        system: 'ours-http-push',
        round: 1,
        drains: { c1: drain(1000), c4p1: drain(2000) },
        brokerRssBytes: 300 * 1048576,
      },
      {
        system: 'ours-http-push',
        round: 2,
        drains: { c1: drain(2000), c4p1: drain(3000, 7) },
        latency: {
          p50: 1,
          p99: 3,
          p999: 9,
          max: 12,
          firstSecond: { n: 10, p50: 2, p99: 8, p999: 8, max: 8 },
          afterFirstSecond: { n: 90, p50: 1, p99: 2, p999: 2, max: 2 },
        },
        brokerRssBytes: 310 * 1048576,
      },
      { system: 'ours-http-push', round: 3, error: 'broker died' },
      { system: 'redis-streams', round: 0, skipped: 'no redis-server on PATH' },
    ];
    const rows = summarise(runs, ['ours-http-push', 'redis-streams']);
    const row = rows[0];
    expect(row).toMatchObject({ rounds: 2, errors: ['round 3: broker died'], brokerRssMiB: 305 });
    expect(row?.c1?.msgPerS).toBe(1500);
    // ratios per round (2.0 and 1.5), then their median; not the ratio of the medians (2500 / 1500)
    expect(row?.c4p1?.ratio).toBe(1.75);
    expect(row?.c4p1?.duplicates).toBe(7);
    expect(row?.c4p2).toBeUndefined();
    const table = formatTable(rows);
    const lines = table.split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[2]).toContain(
      '| ours-http-push | 1,500 | 2,500 (1.75×) | — | 3,000 / 5,000 / — | 1.00 / 3.0 / 9.0 / 12.0 | 8.0 / 2.0 | 10.0 | 5.0 | 100 | 305 |',
    );
    expect(lines[2]).toContain('0/0, 7/0, —');
    expect(lines[3]).toMatch(/^\| redis-streams \| skipped: no redis-server on PATH \|/);
    // every row has as many cells as the header
    const cells = (l: string) => l.split('|').length;
    expect(new Set(lines.map(cells)).size).toBe(1);
  });

  test('secondHalfRate: from when the processes together had half the messages to the last new one', () => {
    // One process: half (500 of 1000) at 2000 ms, the last new one at 2500 ms: 500 in 0.5 s.
    expect(secondHalfRate([[1000, 100, 1500, 300, 2000, 500, 2400, 900]], 1000, 2500)).toBe(1000);
    // Two processes: 200 + 300 reach half at 1200 ms (the second's milestone), 500 more by 2200 ms.
    const two = secondHalfRate(
      [
        [1000, 200, 1800, 600],
        [1100, 100, 1200, 300],
      ],
      1000,
      2200,
    );
    expect(two).toBe(500);
    // Never half, or nothing after the half: cannot be told.
    expect(secondHalfRate([[1000, 100]], 1000, 2000)).toBeNaN();
    expect(secondHalfRate([[1000, 500]], 1000, 1000)).toBeNaN();
    expect(secondHalfRate([], 1000, 2000)).toBeNaN();
  });

  test('brokerAddresses: what the CLI broker printed so far, the remoting address without its scheme', () => {
    expect(brokerAddresses('')).toEqual({});
    const http = 'broker listening on http://127.0.0.1:40001\n';
    expect(brokerAddresses(http)).toEqual({ http: 'http://127.0.0.1:40001' });
    expect(brokerAddresses(`${http}remoting listening on tcp://127.0.0.1:40002\n`)).toEqual({
      http: 'http://127.0.0.1:40001',
      tcp: '127.0.0.1:40002',
    });
  });

  test('xreadgroupArgs: new entries of the stream for one consumer, 32 at most, blocking 200 ms', () => {
    expect(xreadgroupArgs('G', 'c0', 'S')).toEqual([
      'GROUP',
      'G',
      'c0',
      'COUNT',
      32,
      'BLOCK',
      200,
      'STREAMS',
      'S',
      '>',
    ]);
  });
});
