/**
 * `compileSql92`: RocketMQ's SQL92 message filter, compiled once and evaluated many times.
 * @pure
 */
import { Sql92EvaluationError, Sql92ParseError } from './errors.js';
import { compileNode, type Evaluator, type PropertyBag } from './sql92-compiler.js';
import { parseSql92 } from './sql92-parser.js';

/** Message properties as the filter reads them (RocketMQ's MessageEvaluationContext). */
export type FilterProperties = Readonly<Record<string, string>> | ReadonlyMap<string, string> | null | undefined;

/** A compiled SQL92 filter. */
export interface CompiledSql92 {
  /** The source text it was compiled from. */
  readonly expression: string;
  /** The property names the expression reads. */
  readonly propertyNames: readonly string[];
  /**
   * RocketMQ's raw result over the message properties: `true`, `false` or `null` (unknown). Throws
   * {@link Sql92EvaluationError} where RocketMQ's evaluator throws. `null` properties read as empty.
   */
  evaluate(properties: FilterProperties): boolean | null;
  /** The broker's decision: true only when `evaluate` gives `true`; never throws. */
  matches(properties: FilterProperties): boolean;
}

const EMPTY: PropertyBag = Object.freeze(Object.create(null) as Record<string, unknown>);

class CompiledExpression implements CompiledSql92 {
  readonly expression: string;
  readonly propertyNames: readonly string[];
  private readonly run: Evaluator;

  constructor(expression: string, run: Evaluator, names: readonly string[]) {
    this.expression = expression;
    this.run = run;
    this.propertyNames = names;
  }

  private bag(properties: FilterProperties): PropertyBag {
    if (properties == null) return EMPTY;
    if (properties instanceof Map) {
      // only the names the expression reads are copied
      const o = Object.create(null) as Record<string, unknown>;
      for (const n of this.propertyNames) o[n] = properties.get(n);
      return o;
    }
    return properties as PropertyBag;
  }

  evaluate(properties: FilterProperties): boolean | null {
    try {
      return this.run(this.bag(properties)) as boolean | null;
    } catch (e) {
      if (e instanceof Sql92EvaluationError) throw e;
      // RangeError cannot happen with the depth limit; anything else is a bug, still typed
      throw new Sql92EvaluationError('RuntimeException', `evaluation failed: ${String(e)}`);
    }
  }

  matches(properties: FilterProperties): boolean {
    try {
      return this.run(this.bag(properties)) === true;
    } catch {
      // RocketMQ: an evaluation error means the message does not match
      return false;
    }
  }
}

/**
 * Compiles a SQL92 filter expression. Throws {@link Sql92ParseError} (with `position` and
 * `expected`) when it does not compile, including when input is left over after a complete
 * expression (RocketMQ silently ignores such input; rocketmq-ts refuses it).
 */
export function compileSql92(expression: string): CompiledSql92 {
  if (typeof expression !== 'string') {
    throw new Sql92ParseError('The expression must be a string', 0, 'a SQL92 expression');
  }
  const root = parseSql92(expression);
  const names = new Set<string>();
  let run: Evaluator;
  try {
    run = compileNode(root, names);
  } catch (e) {
    throw new Sql92ParseError('Expression could not be compiled', 0, 'a less deeply nested expression', { cause: e });
  }
  return new CompiledExpression(expression, run, [...names]);
}
