// Pure helpers of the comparison harness (bench/compare.mjs): argument parsing, percentiles, medians,
// per-sequence delivery counts (duplicates / missing), /proc parsing and the printed table. No I/O here,
// so test/unit/bench/compare-lib.test.ts covers it without starting anything.
import { Buffer } from 'node:buffer';
import path from 'node:path';

/** Every system the harness knows, in table order. */
export const SYSTEMS = Object.freeze([
  'ours-http-push',
  'ours-tcp-push',
  'ours-http-lite',
  'ours-tcp-lite',
  'java-on-rocketmq',
  'java-on-ours',
  'ours-tcp-on-rocketmq',
  'java-on-rocketmq5',
  'ours-tcp-on-rocketmq5',
  'redis-streams',
]);

/** The drain columns: consumers in total, spread over this many processes. */
export const DRAINS = Object.freeze([
  { key: 'c1', consumers: 1, processes: 1, label: '1 consumer' },
  { key: 'c4p1', consumers: 4, processes: 1, label: '4 consumers / 1 process' },
  { key: 'c4p2', consumers: 4, processes: 2, label: '4 consumers / 2 processes' },
]);

export const DEFAULTS = Object.freeze({
  messages: 200_000,
  rounds: 3,
  rate: 2000,
  seconds: 20,
  bodyBytes: 1024,
  sendsFrom: 'ready',
});

const USAGE = `usage: node bench/compare.mjs [--messages N] [--rounds R] [--only a,b] [--rate MSG_PER_S] [--seconds S]
                              [--body-bytes B] [--lite-loop iter|poll] [--sends-from ready|start] [--no-results] [--help]
  --messages N    backlog drained per column (default ${DEFAULTS.messages})
  --rounds R      rounds; each round runs every system once, the table shows per-system medians (default ${DEFAULTS.rounds})
  --only a,b      systems to run (default all): ${SYSTEMS.join(', ')}
  --rate, --seconds  the latency run: RATE msg/s for S seconds (default ${DEFAULTS.rate} for ${DEFAULTS.seconds} s)
  --body-bytes B  message body size (default ${DEFAULTS.bodyBytes}; at least 16)
  --lite-loop     how the LitePullConsumer rows consume: 'iter' (for await, default) or 'poll'
  --sends-from    the latency run's first send: once the consumer is 'ready' (default), or as its start() is called ('start')
  --no-results    print the table only, write nothing to bench/results/`;

/** Thrown for a bad command line; the message names the flag. */
export class UsageError extends Error {
  constructor(message) {
    super(`${message}\n${USAGE}`);
    this.name = 'UsageError';
  }
}

function positiveInt(flag, raw, min = 1) {
  const n = Number(raw);
  if (raw === undefined || !Number.isInteger(n) || n < min) {
    throw new UsageError(`${flag} must be an integer >= ${min}, got ${raw === undefined ? 'nothing' : `'${raw}'`}`);
  }
  return n;
}

/** Parses the command line (without node and the script path). `help: true` means: print `usage` and stop. */
export function parseArgs(argv) {
  const opts = { ...DEFAULTS, only: [...SYSTEMS], liteLoop: 'iter', writeResults: true, help: false, usage: USAGE };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => argv[++i];
    switch (flag) {
      case '--messages':
        opts.messages = positiveInt(flag, value());
        break;
      case '--rounds':
        opts.rounds = positiveInt(flag, value());
        break;
      case '--rate':
        opts.rate = positiveInt(flag, value());
        break;
      case '--seconds':
        opts.seconds = positiveInt(flag, value());
        break;
      case '--body-bytes':
        opts.bodyBytes = positiveInt(flag, value(), 16);
        break;
      case '--only': {
        const raw = value();
        const names = (raw ?? '').split(',').filter(Boolean);
        const unknown = names.filter((n) => !SYSTEMS.includes(n));
        if (names.length === 0 || unknown.length > 0) {
          throw new UsageError(`--only: unknown system(s) '${unknown.join(',') || raw || ''}'`);
        }
        opts.only = SYSTEMS.filter((s) => names.includes(s));
        break;
      }
      case '--lite-loop': {
        const raw = value();
        if (raw !== 'iter' && raw !== 'poll')
          throw new UsageError(`--lite-loop must be 'iter' or 'poll', got '${raw}'`);
        opts.liteLoop = raw;
        break;
      }
      case '--sends-from': {
        const raw = value();
        if (raw !== 'ready' && raw !== 'start')
          throw new UsageError(`--sends-from must be 'ready' or 'start', got '${raw}'`);
        opts.sendsFrom = raw;
        break;
      }
      case '--no-results':
        opts.writeResults = false;
        break;
      case '--help':
      case '-h':
        opts.help = true;
        break;
      default:
        throw new UsageError(`unknown argument '${flag}'`);
    }
  }
  return opts;
}

/**
 * A RocketMQ kit: `envDir` (RMQ_KIT_DIR, RMQ5_KIT_DIR) when set, else `shared/<folder>` beside the clone
 * or beside one of its parent folders (a git worktree nested deeper finds it too). `folder` is
 * `rocketmq-java` (4.9.8, the default) or `rocketmq5-java` (5.3.3); `exists` is fs.existsSync.
 */
export function findKitDir(root, envDir, exists, folder = 'rocketmq-java') {
  if (envDir) return path.resolve(envDir);
  for (let dir = path.dirname(root); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'shared', folder);
    if (exists(candidate)) return candidate;
    if (dir === path.dirname(dir)) return path.join(path.dirname(root), 'shared', folder);
  }
}

/** The value at percentile `p` (0..100) of an ascending array (nearest rank); NaN when empty. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  // The epsilon keeps 99.9 % of 1000 at rank 999 despite floating point (999.0000000000001).
  const rank = Math.ceil((p * sorted.length) / 100 - 1e-9);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** p50 / p99 / p99.9 / max of unsorted samples (ms), with their count. */
export function latencySummary(samples) {
  const sorted = Float64Array.from(samples).sort();
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    p999: percentile(sorted, 99.9),
    max: sorted.length === 0 ? NaN : sorted[sorted.length - 1],
  };
}

/** Median of the finite numbers in `values` (mean of the middle two for an even count); NaN when none. */
export function median(values) {
  const v = values.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const mid = v.length >> 1;
  return v.length % 2 === 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

/**
 * The drain rate over its second half: the messages after the first half of `total`, divided by the time
 * from when the processes together had delivered half of them to `lastAt` (the last new one), in msg/s.
 * A drain of a few seconds is mostly JIT warm-up at its start; this is the rate once it is warm.
 * `milestones`: per process, [time ms, distinct so far, ...] in time order. NaN when it cannot be told.
 */
export function secondHalfRate(milestones, total, lastAt) {
  const events = [];
  milestones.forEach((m, w) => {
    for (let i = 0; i + 1 < m.length; i += 2) events.push({ w, at: m[i], distinct: m[i + 1] });
  });
  events.sort((a, b) => a.at - b.at);
  const latest = new Array(milestones.length).fill(0);
  let sum = 0;
  for (const e of events) {
    sum += e.distinct - latest[e.w];
    latest[e.w] = e.distinct;
    if (sum >= total / 2) return lastAt > e.at ? ((total - sum) / (lastAt - e.at)) * 1000 : NaN;
  }
  return NaN;
}

/**
 * Delivery counts per sequence number, one byte each (saturating at 255), so that counts from several
 * processes can be merged and duplicates and gaps counted exactly.
 */
export class SeqCounter {
  constructor(n) {
    this.counts = new Uint8Array(n);
    this.deliveries = 0;
    this.distinct = 0;
    this.outOfRange = 0;
  }

  /** Records one delivery; returns true when `seq` was not seen before. */
  add(seq) {
    this.deliveries++;
    if (!Number.isInteger(seq) || seq < 0 || seq >= this.counts.length) {
      this.outOfRange++;
      return false;
    }
    const c = this.counts[seq];
    if (c < 255) this.counts[seq] = c + 1;
    if (c === 0) this.distinct++;
    return c === 0;
  }

  /** Adds another counter's counts (e.g. from another process), as bytes or base64. */
  merge(counts) {
    const other = typeof counts === 'string' ? Buffer.from(counts, 'base64') : counts;
    if (other.length !== this.counts.length)
      throw new RangeError(`merge: ${other.length} counts, expected ${this.counts.length}`);
    for (let i = 0; i < other.length; i++) {
      const o = other[i];
      if (o === 0) continue;
      const c = this.counts[i];
      if (c === 0) this.distinct++;
      this.counts[i] = Math.min(255, c + o);
      this.deliveries += o;
    }
  }

  /** Distinct sequences seen, sequences never delivered, and deliveries beyond the first of each. */
  summary() {
    let duplicates = 0;
    for (const c of this.counts) if (c > 1) duplicates += c - 1;
    return {
      distinct: this.distinct,
      missing: this.counts.length - this.distinct,
      duplicates,
      outOfRange: this.outOfRange,
    };
  }

  toBase64() {
    return Buffer.from(this.counts.buffer, this.counts.byteOffset, this.counts.length).toString('base64');
  }
}

/** utime + stime of a /proc/<pid>/stat line, in clock ticks (the command name may hold spaces and parens). */
export function cpuTicksFromStat(stat) {
  const close = stat.lastIndexOf(')');
  if (close < 0) throw new Error('not a /proc/<pid>/stat line');
  const fields = stat.slice(close + 2).split(' ');
  // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
  return Number(fields[11]) + Number(fields[12]);
}

/** The parent pid in a /proc/<pid>/stat line. */
export function ppidFromStat(stat) {
  const close = stat.lastIndexOf(')');
  return Number(stat.slice(close + 2).split(' ')[1]);
}

/** A `VmRSS:` / `VmHWM:` value of /proc/<pid>/status, in bytes; NaN when absent. */
export function statusBytes(status, field) {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return m ? Number(m[1]) * 1024 : NaN;
}

/** The figures Drain.java prints for `drain` and `latency` (see ../shared/rocketmq-java/bench/Drain.java). */
export function parseJavaDrain(out) {
  const done = /drain: (complete|TIMEOUT) distinct=(\d+) deliveries=(\d+)/.exec(out);
  const rate = /first-to-last delivery = (\d+) msg\/s/.exec(out);
  const fromStart = /from consumer\.start\(\) = (\d+) msg\/s/.exec(out);
  if (!done || !rate) return undefined;
  return {
    preloadFailed: Number(/^preload: .*failed=(\d+)/m.exec(out)?.[1] ?? NaN),
    complete: done[1] === 'complete',
    distinct: Number(done[2]),
    deliveries: Number(done[3]),
    msgPerS: Number(rate[1]),
    msgPerSFromStart: fromStart ? Number(fromStart[1]) : NaN,
  };
}

export function parseJavaLatency(out) {
  const m =
    /publish->listener all \(n=(\d+)\): p50=([\d.]+) ms p90=[\d.]+ ms p99=([\d.]+) ms p99\.9=([\d.]+) ms max=([\d.]+) ms/.exec(
      out,
    );
  if (!m) return undefined;
  return { n: Number(m[1]), p50: Number(m[2]), p99: Number(m[3]), p999: Number(m[4]), max: Number(m[5]) };
}

const fmt = (x, digits = 0) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(digits) : '—');
const thousands = (x) => (typeof x === 'number' && Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—');

/**
 * Per-system medians over the rounds. `runs` is a list of round results: { system, round, skipped?,
 * drains: { c1: { msgPerS, secondHalfMsgPerS?, dup, missing, consumerCpuUsPerMsg, brokerCpuUsPerMsg, consumerRss },
 * ... },
 * latency: { p50, p99, p999, max, firstSecond?, afterFirstSecond? }, brokerRss }.
 */
export function summarise(runs, systems) {
  return systems.map((system) => {
    const mine = runs.filter((r) => r.system === system);
    const done = mine.filter((r) => !r.skipped && !r.error);
    const row = { system, rounds: done.length, skipped: mine.find((r) => r.skipped)?.skipped, errors: [] };
    for (const r of mine) if (r.error) row.errors.push(`round ${r.round}: ${r.error}`);
    for (const d of DRAINS) {
      const cells = done.map((r) => r.drains?.[d.key]).filter(Boolean);
      if (cells.length === 0) continue;
      row[d.key] = {
        msgPerS: median(cells.map((c) => c.msgPerS)),
        ratio: median(done.map((r) => (r.drains?.[d.key]?.msgPerS ?? NaN) / (r.drains?.c1?.msgPerS ?? NaN))),
        secondHalfMsgPerS: median(cells.map((c) => c.secondHalfMsgPerS)),
        duplicates: cells.reduce((s, c) => s + (c.duplicates ?? 0), 0),
        missing: cells.reduce((s, c) => s + (c.missing ?? 0), 0),
        consumerCpuUsPerMsg: median(cells.map((c) => c.consumerCpuUsPerMsg)),
        brokerCpuUsPerMsg: median(cells.map((c) => c.brokerCpuUsPerMsg)),
        consumerRssMiB: median(cells.map((c) => c.consumerRssBytes / 1048576)),
      };
    }
    const lat = done.map((r) => r.latency).filter(Boolean);
    if (lat.length > 0) {
      row.latency = {
        p50: median(lat.map((l) => l.p50)),
        p99: median(lat.map((l) => l.p99)),
        p999: median(lat.map((l) => l.p999)),
        max: median(lat.map((l) => l.max)),
        p99FirstSecond: median(lat.map((l) => l.firstSecond?.p99)),
        p99AfterFirstSecond: median(lat.map((l) => l.afterFirstSecond?.p99)),
      };
    }
    row.brokerRssMiB = median(done.map((r) => r.brokerRssBytes / 1048576));
    return row;
  });
}

/** The printed table (GitHub markdown, so the .md result file shows the same). */
export function formatTable(rows) {
  const head = [
    'system',
    '1 consumer msg/s',
    '4 cons / 1 proc msg/s (×)',
    '4 cons / 2 procs msg/s (×)',
    '2nd half msg/s: 1c / 4c1p / 4c2p',
    'p50 / p99 / p99.9 / max ms',
    'p99 1st s / rest ms',
    'consumer CPU µs/msg',
    'broker CPU µs/msg',
    'consumer RSS MiB',
    'broker RSS MiB',
    'dup / missing (1c, 4c1p, 4c2p)',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`];
  for (const r of rows) {
    if (r.rounds === 0) {
      const why = r.skipped ?? r.errors[0] ?? 'not run';
      lines.push(
        `| ${r.system} | ${r.skipped ? 'skipped' : 'failed'}: ${why.replace(/\|/g, '/')} |${' |'.repeat(head.length - 2)}`,
      );
      continue;
    }
    const drain = (k) => (r[k] ? `${thousands(r[k].msgPerS)}${k === 'c1' ? '' : ` (${fmt(r[k].ratio, 2)}×)`}` : '—');
    const l = r.latency;
    const dups = DRAINS.map((d) => (r[d.key] ? `${r[d.key].duplicates}/${r[d.key].missing}` : '—')).join(', ');
    lines.push(
      `| ${[
        r.system,
        drain('c1'),
        drain('c4p1'),
        drain('c4p2'),
        DRAINS.map((d) => thousands(r[d.key]?.secondHalfMsgPerS)).join(' / '),
        l ? `${fmt(l.p50, 2)} / ${fmt(l.p99, 1)} / ${fmt(l.p999, 1)} / ${fmt(l.max, 1)}` : '—',
        l && Number.isFinite(l.p99FirstSecond) ? `${fmt(l.p99FirstSecond, 1)} / ${fmt(l.p99AfterFirstSecond, 1)}` : '—',
        fmt(r.c1?.consumerCpuUsPerMsg, 1),
        fmt(r.c1?.brokerCpuUsPerMsg, 1),
        fmt(r.c1?.consumerRssMiB),
        fmt(r.brokerRssMiB),
        dups,
      ].join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

/**
 * The addresses a CLI broker printed so far in `text` (its stdout): `http` (the HTTP base URL) and `tcp`
 * (host:port of the remoting listener), each once printed.
 */
export function brokerAddresses(text) {
  const found = {};
  const http = /broker listening on (\S+)/.exec(text);
  const tcp = /remoting listening on (\S+)/.exec(text);
  if (http) found.http = http[1];
  if (tcp) found.tcp = tcp[1].replace(/^[a-z]+:\/\//, '');
  return found;
}

/** XREADGROUP's arguments for consumer `name` of `group` on `stream`: new entries, 32 at most, blocking 200 ms. */
export function xreadgroupArgs(group, name, stream) {
  return ['GROUP', group, name, 'COUNT', 32, 'BLOCK', 200, 'STREAMS', stream, '>'];
}
