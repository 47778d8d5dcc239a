/**
 * Recursive-descent parser for RocketMQ's SQL92 filter grammar (SelectorParser.jj), lowest to highest
 * precedence:
 *
 *   selector   := or EOF                        (RocketMQ ignores what follows; we reject it)
 *   or         := and (OR and)*
 *   and        := equality (AND equality)*
 *   equality   := comparison ( '=' comparison | '<>' comparison | IS NULL | IS NOT NULL )*
 *   comparison := unary ( ('>'|'>='|'<'|'<=') unary
 *                       | [NOT] (CONTAINS|STARTSWITH|ENDSWITH) string
 *                       | [NOT] BETWEEN unary AND unary
 *                       | [NOT] IN '(' string (',' string)* ')' )*
 *   unary      := '+' unary | '-' unary | NOT unary | primary
 *   primary    := literal | identifier | '(' or ')'
 *
 * `NOT` is unary and binds tighter than every comparison. Parentheses are transparent: `(a)` is the
 * property itself and `(5)` a constant, for the checks below.
 *
 * Checks RocketMQ makes while building the tree (each one a parse error here):
 * - the selector, each AND/OR operand and each NOT operand must be boolean; a bare property is
 *   wrapped in a boolean cast, a string/number literal or a negation is refused;
 * - `=`/`<>`: no NULL literal operand; TRUE/FALSE on the left of a non-boolean literal is refused;
 * - `> >= < <=` (and BETWEEN): a literal operand must be a number, and no boolean expression;
 * - BETWEEN with two literal bounds requires low <= high;
 * - IN needs a property on its left;
 * - a decimal literal above Long.MAX_VALUE, a float literal above Double.MAX_VALUE or below
 *   Double.MIN_VALUE (so `0.0`) is refused.
 * @pure
 */
import { Sql92ParseError } from './errors.js';
import { describeToken, tokenize, type Token, type TokenKind } from './sql92-lexer.js';
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
  type PropNode,
  type RelOp,
  type StrOp,
  type ValueType,
} from './sql92-ast.js';
import { comparator } from './sql92-compare.js';

/** Deepest tree accepted (nesting of parentheses and unary operators, chains of comparisons). */
export const MAX_DEPTH = 1000;

const LONG_MAX = 2n ** 63n - 1n;
const INT_MAX_BIG = 2147483647n;
const DOUBLE_MIN = Number.MIN_VALUE; // Java's Double.MIN_VALUE, 4.9e-324

class Parser {
  private readonly tokens: Token[];
  private i = 0;
  private depth = 0;

  constructor(private readonly src: string) {
    this.tokens = tokenize(src);
  }

  parse(): Node {
    const root = this.asBoolean(this.orExpr());
    const t = this.peek();
    if (t.kind !== 'EOF') {
      // rocketmq-ts: RocketMQ stops here and silently ignores the rest; we refuse it.
      throw new Sql92ParseError(
        `Unexpected ${describeToken(t)}: input left over after a complete expression`,
        t.start,
        'end of input or an operator',
      );
    }
    return root;
  }

  // ---- token helpers ---------------------------------------------------------------------------

  /** The current token (the list always ends with EOF, and `i` never moves past it). */
  private peek(): Token {
    return this.tokens[this.i] as Token;
  }
  /** The kind of the token after the current one. */
  private peekKind2(): TokenKind {
    const t = this.tokens[this.i + 1];
    return t === undefined ? 'EOF' : t.kind;
  }
  private next(): Token {
    const t = this.tokens[this.i] as Token;
    if (t.kind !== 'EOF') this.i++;
    return t;
  }
  private expect(kind: TokenKind, expected: string): Token {
    const t = this.peek();
    if (t.kind !== kind) this.fail(t, expected);
    return this.next();
  }
  private fail(t: Token, expected: string): never {
    throw new Sql92ParseError(`Unexpected ${describeToken(t)}`, t.start, expected);
  }
  private semantic(message: string, pos: number, expected: string): never {
    throw new Sql92ParseError(message, pos, expected);
  }

  private checkHeight(n: Node): Node {
    if (n.height > MAX_DEPTH) {
      this.semantic(
        `Expression nested too deeply (more than ${MAX_DEPTH} levels)`,
        n.pos,
        'a less deeply nested expression',
      );
    }
    return n;
  }
  private enter(t: Token): void {
    if (++this.depth > MAX_DEPTH) {
      this.semantic(
        `Expression nested too deeply (more than ${MAX_DEPTH} levels)`,
        t.start,
        'a less deeply nested expression',
      );
    }
  }

  // ---- grammar ---------------------------------------------------------------------------------

  private orExpr(): Node {
    const first = this.andExpr();
    if (this.peek().kind !== 'OR') return first;
    const operands: Node[] = [this.asBoolean(first)];
    while (this.peek().kind === 'OR') {
      this.next();
      operands.push(this.asBoolean(this.andExpr()));
    }
    return this.logic('or', operands);
  }

  private andExpr(): Node {
    const first = this.equalityExpr();
    if (this.peek().kind !== 'AND') return first;
    const operands: Node[] = [this.asBoolean(first)];
    while (this.peek().kind === 'AND') {
      this.next();
      operands.push(this.asBoolean(this.equalityExpr()));
    }
    return this.logic('and', operands);
  }

  private logic(k: 'and' | 'or', parts: Node[]): LogicNode {
    const operands: Node[] = [];
    for (const p of parts) {
      if (p.k === k) operands.push(...p.operands);
      else operands.push(p);
    }
    let height = 0;
    for (const o of operands) height = Math.max(height, o.height);
    return this.checkHeight({ k, operands, pos: parts[0]?.pos ?? 0, height: height + 1 }) as LogicNode;
  }

  private equalityExpr(): Node {
    let left = this.comparisonExpr();
    for (;;) {
      const t = this.peek();
      if (t.kind === '=' || t.kind === '<>') {
        this.next();
        const right = this.comparisonExpr();
        this.checkEqualOperand(left);
        this.checkEqualOperand(right);
        if (left.k === 'const' && right.k === 'const' && isBooleanExpression(left) && !isBooleanExpression(right)) {
          this.semantic(
            `${describeConst(left)} cannot be compared with ${describeConst(right)}`,
            left.pos,
            'operands of comparable types',
          );
        }
        const eq = this.eq(left, right);
        left = t.kind === '=' ? eq : this.not(eq, left.pos);
      } else if (t.kind === 'IS') {
        this.next();
        const nullConst: ConstNode = { k: 'const', type: 'null', value: null, pos: t.start, height: 1 };
        if (this.peek().kind === 'NULL') {
          this.next();
          left = this.eq(left, nullConst);
        } else {
          this.expect('NOT', 'NULL or NOT NULL after IS');
          this.expect('NULL', 'NULL after IS NOT');
          left = this.not(this.eq(left, nullConst), left.pos);
        }
      } else {
        return left;
      }
    }
  }

  private comparisonExpr(): Node {
    let left = this.unaryExpr();
    for (;;) {
      const t = this.peek();
      switch (t.kind) {
        case '>':
        case '>=':
        case '<':
        case '<=': {
          this.next();
          const right = this.unaryExpr();
          left = this.cmp(t.kind, left, right);
          break;
        }
        case 'CONTAINS':
        case 'STARTSWITH':
        case 'ENDSWITH':
          this.next();
          left = this.strop(t.kind, false, left);
          break;
        case 'BETWEEN':
          this.next();
          left = this.between(left, false);
          break;
        case 'IN':
          this.next();
          left = this.inList(left, false);
          break;
        case 'NOT': {
          const op = this.peekKind2();
          if (op === 'CONTAINS' || op === 'STARTSWITH' || op === 'ENDSWITH') {
            this.next();
            this.next();
            left = this.strop(op, true, left);
          } else if (op === 'BETWEEN') {
            this.next();
            this.next();
            left = this.between(left, true);
          } else if (op === 'IN') {
            this.next();
            this.next();
            left = this.inList(left, true);
          } else {
            // RocketMQ commits to the comparison here: NOT after an operand must start one of these
            this.fail(this.tokens[this.i + 1] as Token, 'CONTAINS, STARTSWITH, ENDSWITH, BETWEEN or IN after NOT');
          }
          break;
        }
        default:
          return left;
      }
    }
  }

  private unaryExpr(): Node {
    // Prefix operators are collected in a loop (not recursion) and applied innermost first.
    const ops: Token[] = [];
    for (;;) {
      const t = this.peek();
      if (t.kind !== '+' && t.kind !== '-' && t.kind !== 'NOT') break;
      this.enter(t);
      ops.push(this.next());
    }
    let node = this.primaryExpr();
    for (let j = ops.length - 1; j >= 0; j--) {
      const op = ops[j] as Token;
      if (op.kind === '-') node = this.negate(node, op.start);
      else if (op.kind === 'NOT') node = this.not(this.asBoolean(node), op.start);
      // '+' leaves its operand as it is (a literal stays a literal)
    }
    this.depth -= ops.length;
    return node;
  }

  private primaryExpr(): Node {
    const t = this.peek();
    switch (t.kind) {
      case 'STRING':
        this.next();
        return { k: 'const', type: 'str', value: t.text, pos: t.start, height: 1 };
      case 'DECIMAL':
        this.next();
        return this.decimal(t);
      case 'FLOAT':
        this.next();
        return this.float(t);
      case 'TRUE':
      case 'FALSE':
        this.next();
        return { k: 'const', type: 'bool', value: t.kind === 'TRUE', pos: t.start, height: 1 };
      case 'NULL':
        this.next();
        return { k: 'const', type: 'null', value: null, pos: t.start, height: 1 };
      case 'ID':
        this.next();
        return { k: 'prop', name: t.text, pos: t.start, height: 1 };
      case '(': {
        this.next();
        this.enter(t);
        const inner = this.orExpr();
        this.expect(')', "')'");
        this.depth--;
        return inner;
      }
      default:
        return this.fail(t, 'an operand (literal, property, NOT, +, - or a parenthesised expression)');
    }
  }

  // ---- literals --------------------------------------------------------------------------------

  private decimal(t: Token): ConstNode {
    const text = /[lL]$/.test(t.text) ? t.text.slice(0, -1) : t.text;
    // RocketMQ: a decimal literal is a Long, narrowed to Integer when it fits
    if (text.length <= 9) return { k: 'const', type: 'int', value: Number(text), pos: t.start, height: 1 };
    const big = BigInt(text);
    if (big > LONG_MAX) {
      this.semantic(`Integer literal ${t.text} is out of the long range`, t.start, `a value <= ${LONG_MAX}`);
    }
    return big <= INT_MAX_BIG
      ? { k: 'const', type: 'int', value: Number(big), pos: t.start, height: 1 }
      : { k: 'const', type: 'long', value: big, pos: t.start, height: 1 };
  }

  private float(t: Token): ConstNode {
    const v = Number(t.text);
    if (v > Number.MAX_VALUE) {
      this.semantic(`Float literal ${t.text} is greater than Double.MAX_VALUE`, t.start, 'a finite double');
    }
    // RocketMQ: values below Double.MIN_VALUE are refused, and that includes 0.0
    if (v < DOUBLE_MIN) {
      this.semantic(
        `Float literal ${t.text} is less than Double.MIN_VALUE (0.0 is refused; write 0)`,
        t.start,
        'a non-zero double',
      );
    }
    return { k: 'const', type: 'double', value: v, pos: t.start, height: 1 };
  }

  // ---- node builders with RocketMQ's checks ---------------------------------------------------

  /** RocketMQ's asBooleanExpression: boolean expressions pass, a property is cast, the rest is refused. */
  private asBoolean(n: Node): Node {
    if (isBooleanExpression(n)) return n;
    if (n.k === 'prop') return { k: 'cast', operand: n, pos: n.pos, height: n.height + 1 };
    return this.semantic(
      `Expression will not result in a boolean value: ${describeNode(n)}`,
      n.pos,
      'a boolean expression or a property',
    );
  }

  private not(operand: Node, pos: number): Node {
    return this.checkHeight({ k: 'not', operand, pos, height: operand.height + 1 });
  }

  private negate(operand: Node, pos: number): Node {
    const t = valueType(operand);
    let value: ConstValue = null;
    let type: ValueType = 'null';
    if (isNumericType(t)) {
      type = t;
      const v = (operand as { value: ConstValue }).value;
      // an int has no negative zero: 0 - 0 is +0
      value = t === 'long' ? -(v as bigint) : t === 'int' ? 0 - (v as number) : -(v as number);
    }
    return this.checkHeight({ k: 'neg', operand, type, value, pos, height: operand.height + 1 });
  }

  private eq(left: Node, right: Node): EqNode {
    return this.checkHeight({
      k: 'eq',
      left,
      right,
      pos: left.pos,
      height: Math.max(left.height, right.height) + 1,
    }) as EqNode;
  }

  private checkEqualOperand(n: Node): void {
    if (n.k === 'const' && n.value === null) {
      this.semantic("'NULL' cannot be compared (use IS NULL or IS NOT NULL)", n.pos, 'a non-NULL operand');
    }
  }

  private checkLessThanOperand(n: Node): void {
    if (n.k === 'const' ? !isNumericType(n.type) : isBooleanExpression(n)) {
      this.semantic(
        `Value ${describeNode(n)} cannot be compared with '>', '>=', '<' or '<='`,
        n.pos,
        'a number or a property',
      );
    }
  }

  private cmp(op: RelOp, left: Node, right: Node): CmpNode {
    this.checkLessThanOperand(left);
    this.checkLessThanOperand(right);
    return this.checkHeight({
      k: 'cmp',
      op,
      left,
      right,
      pos: left.pos,
      height: Math.max(left.height, right.height) + 1,
    }) as CmpNode;
  }

  private strop(op: StrOp, not: boolean, operand: Node): Node {
    const t = this.expect('STRING', `a string literal after ${not ? 'NOT ' : ''}${op}`);
    return this.checkHeight({
      k: 'strop',
      op,
      not,
      operand,
      search: t.text,
      pos: operand.pos,
      height: operand.height + 1,
    });
  }

  private between(value: Node, not: boolean): Node {
    const low = this.unaryExpr();
    this.expect('AND', 'AND between the bounds of BETWEEN');
    const high = this.unaryExpr();
    if (!not && low.k === 'const' && high.k === 'const') {
      // RocketMQ checks literal bounds only (a negated literal is not one), and only for BETWEEN
      if (low.value === null || high.value === null) {
        this.semantic('Illegal values of between, values can not be null', low.pos, 'numeric bounds');
      }
      if (!isNumericType(low.type) || !isNumericType(high.type)) {
        this.semantic('Illegal values of between, bounds must be numbers', low.pos, 'numeric bounds');
      }
      if (comparator(high.type, low.type)(high.value, low.value) < 0) {
        this.semantic(
          `Illegal values of between, left value(${describeConst(low)}) must less than or equal to right value(${describeConst(high)})`,
          low.pos,
          'low <= high',
        );
      }
    }
    // RocketMQ: BETWEEN is (v >= low AND v <= high); NOT BETWEEN is (v < low OR v > high)
    return not
      ? this.logic('or', [this.cmp('<', value, low), this.cmp('>', value, high)])
      : this.logic('and', [this.cmp('>=', value, low), this.cmp('<=', value, high)]);
  }

  private inList(operand: Node, not: boolean): Node {
    const list: string[] = [];
    this.expect('(', `'(' after ${not ? 'NOT ' : ''}IN`);
    list.push(this.expect('STRING', 'a string literal in the IN list').text);
    while (this.peek().kind === ',') {
      this.next();
      list.push(this.expect('STRING', 'a string literal in the IN list').text);
    }
    this.expect(')', "',' or ')' in the IN list");
    if (operand.k !== 'prop') {
      this.semantic(
        `Expected a property for IN, got ${describeNode(operand)}`,
        operand.pos,
        'a property on the left of IN',
      );
    }
    return this.checkHeight({
      k: 'in',
      operand: operand as PropNode,
      list,
      not,
      pos: operand.pos,
      height: operand.height + 1,
    });
  }
}

function describeConst(n: ConstNode): string {
  if (n.value === null) return 'NULL';
  if (typeof n.value === 'boolean') return n.value ? 'TRUE' : 'FALSE';
  if (typeof n.value === 'string') return `'${n.value.replace(/'/g, "''")}'`;
  return String(n.value);
}

function describeNode(n: Node): string {
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

/**
 * Parses a SQL92 filter into a checked tree whose root is boolean; throws {@link Sql92ParseError}.
 * Input left over after a complete expression is an error (RocketMQ ignores it).
 */
export function parseSql92(src: string): Node {
  try {
    return new Parser(src).parse();
  } catch (e) {
    if (e instanceof Sql92ParseError) throw e;
    if (e instanceof RangeError) {
      // belt and braces: the depth limits should make this unreachable
      throw new Sql92ParseError('Expression nested too deeply', 0, 'a less deeply nested expression', { cause: e });
    }
    throw e;
  }
}

export type { ConstNode, PropNode };
