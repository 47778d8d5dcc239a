/**
 * Turns a checked SQL92 tree into nested closures, specialised by node kind and operand types, so
 * evaluation does no dispatch on strings or types. Semantics are RocketMQ's evaluator's:
 *
 * - `=`: both sides evaluated; exactly one null -> null when the left is null, FALSE when the right
 *   is; both null -> TRUE; else compared (ComparisonExpression.doCreateEqual).
 * - `> >= < <=`: left null -> null (the right is not evaluated), right null -> null, else compared.
 * - AND/OR: three-valued, left to right, stopping at the first FALSE (AND) / TRUE (OR), so an error
 *   in a later operand is only raised when that operand is reached (LogicExpression).
 * - NOT null is null; IN on a missing property is null; CONTAINS/STARTSWITH/ENDSWITH and their NOT
 *   forms are FALSE for an empty search string (the operand is then not evaluated) and for a
 *   missing or non-string operand.
 * - a bare property as a boolean: null when missing, FALSE when present.
 * @pure
 */
import type { ConstValue, Node } from './sql92-ast.js';
import { valueType } from './sql92-ast.js';
import { comparator, relationalComparator, toDouble, toInt } from './sql92-compare.js';
import { javaDoubleCompare } from './java-number.js';

/** The properties as the closures read them: own string values; anything else counts as missing. */
export type PropertyBag = Readonly<Record<string, unknown>>;

/** A compiled node: evaluates over a property bag to a Java-typed value (Boolean for boolean nodes). */
export type Evaluator = (p: PropertyBag) => ConstValue;

/** Compiles a node. `names` collects the property names the expression reads. */
export function compileNode(n: Node, names: Set<string>): Evaluator {
  switch (n.k) {
    case 'prop': {
      const name = n.name;
      names.add(name);
      // typeof guards against Object.prototype members (`constructor`, `toString` are valid names)
      return (p) => {
        const v = p[name];
        return typeof v === 'string' ? v : null;
      };
    }
    case 'const': {
      const v = n.value;
      return () => v;
    }
    case 'neg': {
      const folded = n.value;
      if (n.type !== 'null') return () => folded;
      // a non-number negates to null, but its operand is still evaluated (it may throw)
      if (n.operand.k === 'prop' || n.operand.k === 'const') {
        if (n.operand.k === 'prop') names.add(n.operand.name);
        return () => null;
      }
      const operand = compileNode(n.operand, names);
      return (p) => {
        operand(p);
        return null;
      };
    }
    case 'cast': {
      const name = n.operand.name;
      names.add(name);
      return (p) => (typeof p[name] === 'string' ? false : null);
    }
    case 'not': {
      const operand = compileNode(n.operand, names);
      return (p) => {
        const v = operand(p);
        return v === null ? null : !v;
      };
    }
    case 'and':
    case 'or':
      return compileLogic(
        n.k === 'and',
        n.operands.map((o) => compileNode(o, names)),
      );
    case 'eq':
      return compileEqual(n.left, n.right, names);
    case 'cmp':
      return compileRelational(n.op, n.left, n.right, names);
    case 'in': {
      const name = n.operand.name;
      names.add(name);
      const set = new Set(n.list);
      const not = n.not;
      return (p) => {
        const v = p[name];
        return typeof v === 'string' ? set.has(v) !== not : null;
      };
    }
    case 'strop': {
      const search = n.search;
      if (search.length === 0) return () => false;
      const operand = compileNode(n.operand, names);
      const not = n.not;
      switch (n.op) {
        case 'CONTAINS':
          return (p) => {
            const v = operand(p);
            return typeof v === 'string' ? v.includes(search) !== not : false;
          };
        case 'STARTSWITH':
          return (p) => {
            const v = operand(p);
            return typeof v === 'string' ? v.startsWith(search) !== not : false;
          };
        default:
          return (p) => {
            const v = operand(p);
            return typeof v === 'string' ? v.endsWith(search) !== not : false;
          };
      }
    }
  }
}

function compileLogic(isAnd: boolean, ops: Evaluator[]): Evaluator {
  // AND stops at FALSE, OR at TRUE; otherwise null if any operand was null
  const stop = !isAnd;
  if (ops.length === 2) {
    const [a, b] = ops as [Evaluator, Evaluator];
    return (p) => {
      const x = a(p);
      if (x === stop) return stop;
      const y = b(p);
      if (y === stop) return stop;
      return x === null || y === null ? null : !stop;
    };
  }
  return (p) => {
    let sawNull = false;
    for (let i = 0; i < ops.length; i++) {
      const v = (ops[i] as Evaluator)(p);
      if (v === stop) return stop;
      if (v === null) sawNull = true;
    }
    return sawNull ? null : !stop;
  };
}

function compileEqual(left: Node, right: Node, names: Set<string>): Evaluator {
  const tl = valueType(left);
  const tr = valueType(right);
  const l = compileNode(left, names);
  const r = compileNode(right, names);
  // Fast paths for a property against a literal (the common filter shape).
  if (left.k === 'prop' && right.k === 'const' && right.value !== null) {
    const name = left.name;
    const c = right.value;
    if (tr === 'str') {
      return (p) => {
        const v = p[name];
        return typeof v === 'string' ? v === c : null;
      };
    }
    if (tr === 'int') {
      return (p) => {
        const v = p[name];
        return typeof v === 'string' ? toInt(v) === c : null;
      };
    }
  }
  if (tl === 'null' || tr === 'null') {
    // one side is always null: TRUE if the other is null too, else null (left null) or FALSE
    return (p) => {
      const a = l(p);
      const b = r(p);
      if (a === null && b === null) return true;
      return a === null ? null : false;
    };
  }
  const cmp = comparator(tl, tr);
  return (p) => {
    const a = l(p);
    const b = r(p);
    if (a === null) return b === null ? true : null;
    if (b === null) return false;
    return cmp(a, b) === 0;
  };
}

function compileRelational(op: '>' | '>=' | '<' | '<=', left: Node, right: Node, names: Set<string>): Evaluator {
  const tl = valueType(left);
  const tr = valueType(right);
  const test =
    op === '>'
      ? (c: number) => c > 0
      : op === '>='
        ? (c: number) => c >= 0
        : op === '<'
          ? (c: number) => c < 0
          : (c: number) => c <= 0;
  // Fast paths for a property against a number literal.
  if (left.k === 'prop' && right.k === 'const' && (tr === 'int' || tr === 'double')) {
    const name = left.name;
    names.add(name);
    const c = right.value as number;
    if (tr === 'int') {
      switch (op) {
        case '>':
          return (p) => {
            const v = p[name];
            return typeof v === 'string' ? toInt(v) > c : null;
          };
        case '>=':
          return (p) => {
            const v = p[name];
            return typeof v === 'string' ? toInt(v) >= c : null;
          };
        case '<':
          return (p) => {
            const v = p[name];
            return typeof v === 'string' ? toInt(v) < c : null;
          };
        default:
          return (p) => {
            const v = p[name];
            return typeof v === 'string' ? toInt(v) <= c : null;
          };
      }
    }
    return (p) => {
      const v = p[name];
      return typeof v === 'string' ? test(javaDoubleCompare(toDouble(v), c)) : null;
    };
  }
  const l = compileNode(left, names);
  const r = compileNode(right, names);
  if (tl === 'null' || tr === 'null') {
    return (p) => {
      if (l(p) === null) return null;
      r(p);
      return null;
    };
  }
  const cmp = relationalComparator(tl, tr);
  return (p) => {
    const a = l(p);
    if (a === null) return null;
    const b = r(p);
    if (b === null) return null;
    return test(cmp(a, b));
  };
}
