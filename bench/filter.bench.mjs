// Filter throughput: SQL92 `matches` over realistic property maps (compiled once), and the tag-set
// match of the consume-queue stage. Imports the compiled package (npm run build).
// One line per figure: name, value, unit. Targets: SQL >= 2 million/s, tag match >= 20 million/s.
import { performance } from 'node:perf_hooks';
import {
  ExpressionMessageFilter,
  buildSubscriptionData,
  buildSubscriptionDataWithType,
  compileSql92,
  tagsHashCode,
} from '../dist/filter/index.js';

const budgetMs = Number(process.env.BENCH_FILTER_MS ?? 1500);

/** Runs `fn(i)` repeatedly for about `ms` milliseconds after a warm-up; returns calls per second. */
function measure(fn, ms = budgetMs) {
  const warmEnd = performance.now() + Math.min(300, ms / 4);
  let i = 0;
  while (performance.now() < warmEnd) fn(i++);
  let calls = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < ms) {
    for (let k = 0; k < 1000; k++) fn(i++);
    calls += 1000;
    t = performance.now();
  }
  return (calls * 1000) / (t - t0);
}

const line = (name, value, unit) =>
  console.log(`${name.padEnd(44)} ${value.toFixed(value < 10 ? 3 : 0).padStart(14)} ${unit}`);

// ~10 properties per message, as a producer and the broker set them
const tiers = ['vip', 'std', 'free'];
const cs = ['x', 'y', 'z', 'w'];
const maps = [];
for (let i = 0; i < 1024; i++) {
  maps.push({
    TAGS: `Tag${i % 4}`,
    KEYS: `order-${i} user-${i * 7}`,
    UNIQ_KEY: `7F0000010B3C18B4AAC2${(100000 + i).toString(16).toUpperCase()}`,
    WAIT: 'true',
    a: String((i * 37) % 200),
    b: tiers[i % 3],
    c: cs[i % 4],
    region: 'eu-west-1',
    MIN_OFFSET: '0',
    MAX_OFFSET: String(1000 + i),
  });
}
const MASK = maps.length - 1;

const expr = "a > 100 AND b = 'vip' AND c IN ('x','y','z')";
const compiled = compileSql92(expr);
let hits = 0;
const sqlRate = measure((i) => {
  if (compiled.matches(maps[i & MASK])) hits++;
});
line('sql92 matches (a > 100 AND b = ... AND c IN)', sqlRate, 'evals/s');

const sqlFilter = new ExpressionMessageFilter(buildSubscriptionDataWithType('T', expr, 'SQL92'), compiled);
const commitLogRate = measure((i) => {
  if (sqlFilter.isMatchedByCommitLog(null, maps[i & MASK])) hits++;
});
line('sql92 isMatchedByCommitLog (properties map)', commitLogRate, 'evals/s');

const compileRate = measure(
  () => {
    if (compileSql92(expr).expression.length) hits++;
  },
  Math.min(budgetMs, 500),
);
line('sql92 compile', compileRate, 'compiles/s');

const tagFilter = new ExpressionMessageFilter(buildSubscriptionData('T', 'TagA || TagB || TagC || TagD'));
const codes = ['TagA', 'TagX', 'TagC', 'Other', 'TagD', 'TagB', 'Z', 'TagE'].map(tagsHashCode);
const tagRate = measure((i) => {
  if (tagFilter.isMatchedByConsumeQueue(codes[i & 7])) hits++;
});
line('tag isMatchedByConsumeQueue (4 tags)', tagRate, 'matches/s');

if (hits === 0) throw new Error('nothing matched: the benchmark is broken');
