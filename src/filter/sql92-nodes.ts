/**
 * Node builders for the SQL92 parser, each making the check RocketMQ's SelectorParser makes when it
 * builds that kind of node (a refused operand is a parse error, located at the operand), plus the
 * literal conversions (a decimal is a Long narrowed to Integer when it fits; a float must lie within
 * Double.MIN_VALUE..Double.MAX_VALUE). None of them reads tokens: the grammar lives in the parser.
 * @pure
 */
import { Sql92ParseError } from './errors.js';
import type { Token } from './sql92-lexer.js';
import {
  isBooleanExpression,
  isNumericType,
  valueType,
  type CmpNode,
  type ConstNode,
  type ConstValue,
  type EqNode,
  type LogicNode,
  type Node,
  type RelOp,
  type ValueType,
} from './sql92-ast.js';
import { comparator } from './sql92-compare.js';

/** Deepest tree accepted (nesting of parentheses and unary operators, chains of comparisons). */
export const MAX_DEPTH = 1000;

const LONG_MAX = 2n ** 63n - 1n;
const INT_MAX_BIG = 2147483647n;
const DOUBLE_MIN = Number.MIN_VALUE; // Java's Double.MIN_VALUE, 4.9e-324

/** Throws the parse error for a check that failed on a well-formed expression. */
export function semantic(message: string, pos: number, expected: string): never {
  throw new Sql92ParseError(message, pos, expected);
}

/** Throws when the nesting of parentheses and unary operators goes past {@link MAX_DEPTH}. */
export function tooDeep(pos: number): never {
  return semantic(
    `Expression nested too deeply (more than ${MAX_DEPTH} levels)`,
    pos,
    'a less deeply nested expression',
  );
}

/** Returns `n`, or throws when its subtree is higher than {@link MAX_DEPTH}. */
export function checkHeight(n: Node): Node {
  if (n.height > MAX_DEPTH) tooDeep(n.pos);
  return n;
}

// ---- literals ----------------------------------------------------------------------------------

export function decimalLiteral(t: Token): ConstNode {
  const text = /[lL]$/.test(t.text) ? t.text.slice(0, -1) : t.text;
  // RocketMQ: a decimal literal is a Long, narrowed to Integer when it fits
  if (text.length <= 9) return { k: 'const', type: 'int', value: Number(text), pos: t.start, height: 1 };
  const big = BigInt(text);
  if (big > LONG_MAX) {
    semantic(`Integer literal ${t.text} is out of the long range`, t.start, `a value <= ${LONG_MAX}`);
  }
  return big <= INT_MAX_BIG
    ? { k: 'const', type: 'int', value: Number(big), pos: t.start, height: 1 }
    : { k: 'const', type: 'long', value: big, pos: t.start, height: 1 };
}

export function floatLiteral(t: Token): ConstNode {
  const v = Number(t.text);
  if (v > Number.MAX_VALUE) {
    semantic(`Float literal ${t.text} is greater than Double.MAX_VALUE`, t.start, 'a finite double');
  }
  // RocketMQ: values below Double.MIN_VALUE are refused, and that includes 0.0
  if (v < DOUBLE_MIN) {
    semantic(
      `Float literal ${t.text} is less than Double.MIN_VALUE (0.0 is refused; write 0)`,
      t.start,
      'a non-zero double',
    );
  }
  return { k: 'const', type: 'double', value: v, pos: t.start, height: 1 };
}

// ---- node builders with RocketMQ's checks -----------------------------------------------------

/** RocketMQ's asBooleanExpression: boolean expressions pass, a property is cast, the rest is refused. */
export function asBoolean(n: Node): Node {
  if (isBooleanExpression(n)) return n;
  if (n.k === 'prop') return { k: 'cast', operand: n, pos: n.pos, height: n.height + 1 };
  return semantic(
    `Expression will not result in a boolean value: ${describeNode(n)}`,
    n.pos,
    'a boolean expression or a property',
  );
}

/** An AND or OR node; operands that are the same operator are flattened into it. */
export function logic(k: 'and' | 'or', parts: Node[]): LogicNode {
  const operands: Node[] = [];
  for (const p of parts) {
    if (p.k === k) operands.push(...p.operands);
    else operands.push(p);
  }
  let height = 0;
  for (const o of operands) height = Math.max(height, o.height);
  return checkHeight({ k, operands, pos: parts[0]?.pos ?? 0, height: height + 1 }) as LogicNode;
}

export function not(operand: Node, pos: number): Node {
  return checkHeight({ k: 'not', operand, pos, height: operand.height + 1 });
}

export function negate(operand: Node, pos: number): Node {
  const t = valueType(operand);
  let value: ConstValue = null;
  let type: ValueType = 'null';
  if (isNumericType(t)) {
    type = t;
    const v = (operand as { value: ConstValue }).value;
    // an int has no negative zero: 0 - 0 is +0
    value = t === 'long' ? -(v as bigint) : t === 'int' ? 0 - (v as number) : -(v as number);
  }
  return checkHeight({ k: 'neg', operand, type, value, pos, height: operand.height + 1 });
}

/** `left = right` (the caller wraps it in NOT for `<>`), with RocketMQ's checks on both operands. */
export function equal(left: Node, right: Node): EqNode {
  checkEqualOperand(left);
  checkEqualOperand(right);
  if (left.k === 'const' && right.k === 'const' && isBooleanExpression(left) && !isBooleanExpression(right)) {
    semantic(
      `${describeConst(left)} cannot be compared with ${describeConst(right)}`,
      left.pos,
      'operands of comparable types',
    );
  }
  return eq(left, right);
}

/** An equality node without operand checks (IS NULL compares with the NULL literal on purpose). */
export function eq(left: Node, right: Node): EqNode {
  return checkHeight({
    k: 'eq',
    left,
    right,
    pos: left.pos,
    height: Math.max(left.height, right.height) + 1,
  }) as EqNode;
}

function checkEqualOperand(n: Node): void {
  if (n.k === 'const' && n.value === null) {
    semantic("'NULL' cannot be compared (use IS NULL or IS NOT NULL)", n.pos, 'a non-NULL operand');
  }
}

function checkLessThanOperand(n: Node): void {
  if (n.k === 'const' ? !isNumericType(n.type) : isBooleanExpression(n)) {
    semantic(
      `Value ${describeNode(n)} cannot be compared with '>', '>=', '<' or '<='`,
      n.pos,
      'a number or a property',
    );
  }
}

export function cmp(op: RelOp, left: Node, right: Node): CmpNode {
  checkLessThanOperand(left);
  checkLessThanOperand(right);
  return checkHeight({
    k: 'cmp',
    op,
    left,
    right,
    pos: left.pos,
    height: Math.max(left.height, right.height) + 1,
  }) as CmpNode;
}

/** `value [NOT] BETWEEN low AND high`, expanded into two comparisons. */
export function between(value: Node, low: Node, high: Node, negated: boolean): Node {
  if (!negated && low.k === 'const' && high.k === 'const') {
    // RocketMQ checks literal bounds only (a negated literal is not one), and only for BETWEEN
    if (low.value === null || high.value === null) {
      semantic('Illegal values of between, values can not be null', low.pos, 'numeric bounds');
    }
    if (!isNumericType(low.type) || !isNumericType(high.type)) {
      semantic('Illegal values of between, bounds must be numbers', low.pos, 'numeric bounds');
    }
    if (comparator(high.type, low.type)(high.value, low.value) < 0) {
      semantic(
        `Illegal values of between, left value(${describeConst(low)}) must less than or equal to right value(${describeConst(high)})`,
        low.pos,
        'low <= high',
      );
    }
  }
  // RocketMQ: BETWEEN is (v >= low AND v <= high); NOT BETWEEN is (v < low OR v > high)
  return negated
    ? logic('or', [cmp('<', value, low), cmp('>', value, high)])
    : logic('and', [cmp('>=', value, low), cmp('<=', value, high)]);
}

export function describeConst(n: ConstNode): string {
  if (n.value === null) return 'NULL';
  if (typeof n.value === 'boolean') return n.value ? 'TRUE' : 'FALSE';
  if (typeof n.value === 'string') return `'${n.value.replace(/'/g, "''")}'`;
  return String(n.value);
}

export function describeNode(n: Node): string {
  switch (n.k) {
    case 'const':
      return describeConst(n);
    case 'prop':
      return `property ${n.name}`;
    case 'neg':
      return 'a negation';
    default:
      return 'a boolean expression';
  }
}
