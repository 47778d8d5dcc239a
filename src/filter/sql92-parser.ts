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
 * Checks RocketMQ makes while building the tree (each one a parse error here, made by the builders
 * in sql92-nodes.ts):
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
import type { ConstNode, Node, PropNode, StrOp } from './sql92-ast.js';
import {
  MAX_DEPTH,
  asBoolean,
  between,
  checkHeight,
  cmp,
  decimalLiteral,
  describeNode,
  eq,
  equal,
  floatLiteral,
  logic,
  negate,
  not,
  semantic,
  tooDeep,
} from './sql92-nodes.js';

export { MAX_DEPTH };

class Parser {
  private readonly tokens: Token[];
  private i = 0;
  private depth = 0;

  constructor(private readonly src: string) {
    this.tokens = tokenize(src);
  }

  parse(): Node {
    const root = asBoolean(this.orExpr());
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
  private enter(t: Token): void {
    if (++this.depth > MAX_DEPTH) tooDeep(t.start);
  }

  // ---- grammar ---------------------------------------------------------------------------------

  private orExpr(): Node {
    const first = this.andExpr();
    if (this.peek().kind !== 'OR') return first;
    const operands: Node[] = [asBoolean(first)];
    while (this.peek().kind === 'OR') {
      this.next();
      operands.push(asBoolean(this.andExpr()));
    }
    return logic('or', operands);
  }

  private andExpr(): Node {
    const first = this.equalityExpr();
    if (this.peek().kind !== 'AND') return first;
    const operands: Node[] = [asBoolean(first)];
    while (this.peek().kind === 'AND') {
      this.next();
      operands.push(asBoolean(this.equalityExpr()));
    }
    return logic('and', operands);
  }

  private equalityExpr(): Node {
    let left = this.comparisonExpr();
    for (;;) {
      const t = this.peek();
      if (t.kind === '=' || t.kind === '<>') {
        this.next();
        const eqNode = equal(left, this.comparisonExpr());
        left = t.kind === '=' ? eqNode : not(eqNode, left.pos);
      } else if (t.kind === 'IS') {
        this.next();
        const nullConst: ConstNode = { k: 'const', type: 'null', value: null, pos: t.start, height: 1 };
        if (this.peek().kind === 'NULL') {
          this.next();
          left = eq(left, nullConst);
        } else {
          this.expect('NOT', 'NULL or NOT NULL after IS');
          this.expect('NULL', 'NULL after IS NOT');
          left = not(eq(left, nullConst), left.pos);
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
          left = cmp(t.kind, left, right);
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
      if (op.kind === '-') node = negate(node, op.start);
      else if (op.kind === 'NOT') node = not(asBoolean(node), op.start);
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
        return decimalLiteral(t);
      case 'FLOAT':
        this.next();
        return floatLiteral(t);
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

  // ---- productions that read tokens after their operand ---------------------------------------

  private strop(op: StrOp, negated: boolean, operand: Node): Node {
    const t = this.expect('STRING', `a string literal after ${negated ? 'NOT ' : ''}${op}`);
    return checkHeight({
      k: 'strop',
      op,
      not: negated,
      operand,
      search: t.text,
      pos: operand.pos,
      height: operand.height + 1,
    });
  }

  private between(value: Node, negated: boolean): Node {
    const low = this.unaryExpr();
    this.expect('AND', 'AND between the bounds of BETWEEN');
    const high = this.unaryExpr();
    return between(value, low, high, negated);
  }

  private inList(operand: Node, negated: boolean): Node {
    const list: string[] = [];
    this.expect('(', `'(' after ${negated ? 'NOT ' : ''}IN`);
    list.push(this.expect('STRING', 'a string literal in the IN list').text);
    while (this.peek().kind === ',') {
      this.next();
      list.push(this.expect('STRING', 'a string literal in the IN list').text);
    }
    this.expect(')', "',' or ')' in the IN list");
    if (operand.k !== 'prop') {
      semantic(`Expected a property for IN, got ${describeNode(operand)}`, operand.pos, 'a property on the left of IN');
    }
    return checkHeight({
      k: 'in',
      operand: operand as PropNode,
      list,
      not: negated,
      pos: operand.pos,
      height: operand.height + 1,
    });
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
