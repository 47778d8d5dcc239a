import { RocketMQError } from '../../../src/common/errors.js';
import {
  SQL92_MAX_DEPTH,
  Sql92EvaluationError,
  Sql92ParseError,
  compileSql92,
  type CompiledSql92,
} from '../../../src/filter/index.js';
import { RULES, type Expected } from './sql92-rules.cases.js';

function outcome(expr: string, props: Record<string, string>): Expected {
  let c: CompiledSql92;
  try {
    c = compileSql92(expr);
  } catch (e) {
    if (e instanceof Sql92ParseError) return 'parse';
    throw e;
  }
  try {
    return c.evaluate(props);
  } catch (e) {
    if (e instanceof Sql92EvaluationError) return 'eval';
    throw e;
  }
}

for (const [rule, cases] of Object.entries(RULES)) {
  describe(rule, () => {
    it.each(
      cases.map(
        ([expr, props, expected]) => [JSON.stringify(expr), JSON.stringify(props), expected, expr, props] as const,
      ),
    )('%s over %s is %p', (_e, _p, expected, expr, props) => {
      expect(outcome(expr, props)).toBe(expected);
      if (expected !== 'parse') {
        // the broker's decision: only TRUE matches; never throws
        expect(compileSql92(expr).matches(props)).toBe(expected === true);
      }
    });
  });
}

describe('Sql92ParseError carries the position and what was expected', () => {
  const cases: [expr: string, position: number, expected: RegExp][] = [
    ['a = 1 b = 2', 6, /end of input/],
    ['a = ', 4, /operand/],
    ["a IN ('x' 'y')", 10, /',' or '\)'/],
    ['a IN (1)', 6, /string literal/],
    ['a BETWEEN 1 2', 12, /AND/],
    ['a = 1 ;', 6, /valid token/],
    ["a = 'x", 4, /closing quote/],
    ['a IS 5', 5, /NULL/],
    ['a > 0.0', 4, /non-zero double/],
    ['NOT a > 5', 0, /number or a property/],
    ['(a = 1', 6, /'\)'/],
    ["'x'", 0, /boolean expression/],
    ['a = 1 NOT x', 10, /CONTAINS, STARTSWITH, ENDSWITH, BETWEEN or IN/],
  ];
  it.each(cases)('%j fails at %d', (expr, position, expected) => {
    let err: unknown;
    try {
      compileSql92(expr);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(Sql92ParseError);
    expect(err).toBeInstanceOf(RocketMQError);
    const pe = err as Sql92ParseError;
    expect(pe.code).toBe('ERR_SQL92_PARSE');
    expect(pe.position).toBe(position);
    expect(pe.expected).toMatch(expected);
    expect(pe.message).toContain(`position ${position}`);
    expect(pe.message).toContain(pe.expected);
  });

  it('a non-string expression is a parse error', () => {
    expect(() => compileSql92(undefined as unknown as string)).toThrow(Sql92ParseError);
  });
});

describe('Sql92EvaluationError', () => {
  it('has code ERR_SQL92_EVAL and names the Java exception', () => {
    const c = compileSql92('a > 5');
    let err: unknown;
    try {
      c.evaluate({ a: 'x' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(Sql92EvaluationError);
    expect((err as Sql92EvaluationError).code).toBe('ERR_SQL92_EVAL');
    expect((err as Sql92EvaluationError).javaException).toBe('NumberFormatException');
    expect(c.matches({ a: 'x' })).toBe(false);
  });
  it('TRUE = a is a ClassCastException', () => {
    expect(() => compileSql92('TRUE = a').evaluate({ a: 'true' })).toThrow(/ClassCastException/);
  });
});

describe('nesting depth is capped (stack overflow becomes a parse error)', () => {
  it(`accepts ${SQL92_MAX_DEPTH - 1} nested parentheses`, () => {
    const n = SQL92_MAX_DEPTH - 1;
    expect(compileSql92('('.repeat(n) + "a = 'x'" + ')'.repeat(n)).evaluate({ a: 'x' })).toBe(true);
  });
  it.each([
    ['parentheses', '('.repeat(100000) + 'a' + ')'.repeat(100000)],
    ['NOT chain', 'NOT '.repeat(20000) + 'a'],
    ['minus chain', 'a = ' + '- '.repeat(20000) + '1'],
    ['equality chain', 'a' + ' = a'.repeat(20000)],
    ['unclosed parentheses', '('.repeat(100000)],
  ])('%s', (_name, expr) => {
    expect(() => compileSql92(expr)).toThrow(/nested too deeply/);
  });
  it('a long flat AND chain is fine', () => {
    const expr = Array.from({ length: 20000 }, () => "a = 'x'").join(' AND ');
    expect(compileSql92(expr).evaluate({ a: 'x' })).toBe(true);
  });
});

describe('evaluate / matches inputs', () => {
  const c = compileSql92("a = 'x' AND b > 1");
  it('accepts a Map', () => {
    expect(
      c.evaluate(
        new Map([
          ['a', 'x'],
          ['b', '2'],
        ]),
      ),
    ).toBe(true);
    expect(c.matches(new Map([['a', 'x']]))).toBe(false);
  });
  it('null properties read as empty', () => {
    expect(c.evaluate(null)).toBe(null);
    expect(compileSql92('a IS NULL').evaluate(null)).toBe(true);
  });
  it('keeps the source and the property names', () => {
    expect(c.expression).toBe("a = 'x' AND b > 1");
    expect([...c.propertyNames].sort()).toEqual(['a', 'b']);
  });
  it('Object.prototype members are not properties', () => {
    expect(compileSql92('toString IS NULL AND __proto__ IS NULL').evaluate({})).toBe(true);
  });
  it('is reusable: compile once, evaluate many times', () => {
    const f = compileSql92('a > 100');
    expect([f.matches({ a: '101' }), f.matches({ a: '100' }), f.matches({ a: 'x' }), f.matches({})]).toEqual([
      true,
      false,
      false,
      false,
    ]);
  });
});
