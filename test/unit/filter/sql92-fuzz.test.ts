// Fuzz: random strings and random token sequences of the SQL92 grammar. Each one compiles or throws
// Sql92ParseError; each compiled one evaluates over random property maps to true/false/null or
// throws Sql92EvaluationError; nothing else escapes, and no case takes 1 ms or more.
import { Sql92EvaluationError, Sql92ParseError, compileSql92 } from '../../../src/filter/index.js';

/** mulberry32: a small seeded PRNG, so a failure can be replayed. */
function prng(seed: number): () => number {
  let s = seed | 0;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const rnd = prng(20250919);
const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)] as T;

// characters of the grammar plus a few that are not (NBSP, VT, `!`, `;`, `"`, non-ASCII, surrogates)
const CHARS = [
  ...'abcxyzAENOTRUSLlIe$_0123456789.'.split(''),
  "'",
  "'",
  '(',
  ')',
  '=',
  '<',
  '>',
  '-',
  '+',
  '/',
  '*',
  ',',
  ' ',
  ' ',
  ' ',
  '\n',
  '\r',
  '\t',
  '\f',
  '\u000b',
  '\u00a0',
  '!',
  ';',
  '"',
  '٣',
  '中',
  '\ud83d',
  '\ude00',
];

const TOKENS = [
  'a',
  'b',
  'c',
  'TAGS',
  'now',
  'toString',
  'NOT',
  'AND',
  'OR',
  'BETWEEN',
  'IN',
  'TRUE',
  'FALSE',
  'NULL',
  'IS',
  'CONTAINS',
  'STARTSWITH',
  'ENDSWITH',
  'not',
  'and',
  '0',
  '1',
  '5',
  '100',
  '2147483648',
  '9223372036854775807',
  '9223372036854775808',
  '1L',
  '1.5',
  '.5',
  '0.0',
  '1e400',
  '3e-324',
  "'x'",
  "''",
  "'a''b'",
  "'5'",
  "'true'",
  '=',
  '<>',
  '>',
  '>=',
  '<',
  '<=',
  '(',
  ')',
  ',',
  '+',
  '-',
  '/* c */',
  '--c\n',
  '--',
  '!',
  'LIKE',
];

const VALUES = [
  '1',
  '5',
  '100',
  '101',
  '1.5',
  '-0.0',
  'NaN',
  'Infinity',
  ' 3',
  '+3',
  '٣',
  '0x1p3',
  '6d',
  'x',
  'vip',
  'true',
  'TRUE',
  '',
  '2147483648',
  '9223372036854775807',
  'abc',
];
const NAMES = ['a', 'b', 'c', 'TAGS', 'now'];

function randomString(): string {
  const n = Math.floor(rnd() * 40);
  let s = '';
  for (let i = 0; i < n; i++) s += pick(CHARS);
  return s;
}

function randomTokens(): string {
  const n = 1 + Math.floor(rnd() * 14);
  let s = '';
  for (let i = 0; i < n; i++) s += (rnd() < 0.85 ? ' ' : '') + pick(TOKENS);
  return s;
}

function randomProps(): Record<string, string> {
  const p: Record<string, string> = {};
  for (const n of NAMES) if (rnd() < 0.6) p[n] = pick(VALUES);
  return p;
}

type Outcome = 'parse' | 'eval' | 'true' | 'false' | 'null';

/** Compiles and evaluates; returns what happened, or throws what escaped. */
function runCase(expr: string, props: Record<string, string>[]): Outcome[] {
  let compiled;
  try {
    compiled = compileSql92(expr);
  } catch (e) {
    if (e instanceof Sql92ParseError) return ['parse'];
    throw new Error(`compile of ${JSON.stringify(expr)} threw ${String(e)}`);
  }
  const out: Outcome[] = [];
  for (const p of props) {
    try {
      const v = compiled.evaluate(p);
      if (v !== true && v !== false && v !== null) throw new Error(`evaluate returned ${String(v)}`);
      out.push(String(v) as Outcome);
    } catch (e) {
      if (!(e instanceof Sql92EvaluationError))
        throw new Error(`evaluate of ${JSON.stringify(expr)} threw ${String(e)}`);
      out.push('eval');
    }
    const m = compiled.matches(p);
    if (m !== (out[out.length - 1] === 'true'))
      throw new Error(`matches disagrees with evaluate for ${JSON.stringify(expr)}`);
  }
  return out;
}

/** Runs a case and returns its time in ms. */
function timed(expr: string, props: Record<string, string>[], seen?: Record<Outcome, number>): number {
  const t0 = performance.now();
  const out = runCase(expr, props);
  const t = performance.now() - t0;
  if (seen) for (const o of out) seen[o]++;
  return t;
}

const PATHOLOGICAL_MS = 25;

describe('SQL92 fuzz', () => {
  // The time check guards against a pathological input (backtracking, a loop over the input) whose cost
  // grows without bound: typical cases take microseconds, so a case still over 25 ms at its best of
  // five re-runs is such an input, while garbage collection or preemption on a busy machine is not.
  it('100,000 random strings and 30,000 random token sequences: only typed errors, no pathological case', () => {
    const cases: string[] = [];
    for (let i = 0; i < 100_000; i++) cases.push(randomString());
    for (let i = 0; i < 30_000; i++) cases.push(randomTokens());
    // warm up the JIT so the timing measures steady state
    for (let i = 0; i < 2000; i++) runCase(cases[i] as string, [randomProps()]);

    const seen: Record<Outcome, number> = { parse: 0, eval: 0, true: 0, false: 0, null: 0 };
    const slow: [string, Record<string, string>[]][] = [];
    for (const expr of cases) {
      const props = [randomProps(), randomProps()];
      if (timed(expr, props, seen) >= 1) slow.push([expr, props]);
    }
    // A case over 1 ms is timed again later, best of five: on a shared machine a garbage
    // collection, a JIT compile or a preemption can land on any case; a pathological case stays slow.
    let max = 0;
    let slowest = '';
    for (const [expr, props] of slow) {
      let best = Infinity;
      for (let i = 0; i < 5 && best >= PATHOLOGICAL_MS; i++) best = Math.min(best, timed(expr, props));
      if (best > max) {
        max = best;
        slowest = expr;
      }
    }
    expect({
      max: max < PATHOLOGICAL_MS ? 'bounded' : `${max.toFixed(3)} ms for ${JSON.stringify(slowest)}`,
    }).toEqual({ max: 'bounded' });
    // the generators reach every outcome
    for (const o of Object.keys(seen) as Outcome[]) expect([o, seen[o] > 0]).toEqual([o, true]);
  });
});
