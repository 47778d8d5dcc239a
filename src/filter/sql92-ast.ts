/**
 * The syntax tree of a SQL92 filter, shaped after the expression classes of RocketMQ's filter module
 * (the parse-time checks depend on which class a node is: ConstantExpression, PropertyExpression,
 * BooleanExpression).
 *
 * Every value-producing node has a static type (`ValueType`), known at compile time: property values
 * are always strings, literals have their Java type, and a negated number is a constant. The compiler
 * uses it to pick a specialised closure instead of testing types on each evaluation.
 * @pure
 */

/**
 * The Java type of a node's value: `str` (String, or null for a missing property), `int`, `long`,
 * `double`, `bool` (Boolean or null) and `null` (always null: the NULL literal, or a negated
 * non-number).
 */
export type ValueType = 'str' | 'int' | 'long' | 'double' | 'bool' | 'null';

/** A literal's value: a Java int or double is a number, a long a bigint. */
export type ConstValue = string | number | bigint | boolean | null;

interface NodeBase {
  /** Index in the source of the node's first token (for error messages). */
  pos: number;
  /** Height of the subtree, bounded at parse time so compiling and evaluating cannot overflow the stack. */
  height: number;
}

/** A message property (RocketMQ's PropertyExpression). */
export interface PropNode extends NodeBase {
  k: 'prop';
  name: string;
}
/** A literal (ConstantExpression; TRUE, FALSE and NULL are BooleanConstantExpressions). */
export interface ConstNode extends NodeBase {
  k: 'const';
  type: ValueType;
  value: ConstValue;
}
/**
 * Unary minus. Not a constant for RocketMQ's checks even when its operand is; a negated number is
 * folded at parse time (`type` int/long/double, `value` the result), anything else negates to null
 * (`type` 'null') once its operand has been evaluated.
 */
export interface NegNode extends NodeBase {
  k: 'neg';
  operand: Node;
  type: ValueType;
  value: ConstValue;
}
export interface NotNode extends NodeBase {
  k: 'not';
  operand: Node;
}
/** A bare property used as a boolean: null when missing, FALSE otherwise (values are strings). */
export interface CastNode extends NodeBase {
  k: 'cast';
  operand: PropNode;
}
/** AND / OR, flattened (both are associative under left-to-right short-circuit evaluation). */
export interface LogicNode extends NodeBase {
  k: 'and' | 'or';
  operands: Node[];
}
/** `=` (also IS NULL, which compares with NULL without the operand checks). */
export interface EqNode extends NodeBase {
  k: 'eq';
  left: Node;
  right: Node;
}
export type RelOp = '>' | '>=' | '<' | '<=';
export interface CmpNode extends NodeBase {
  k: 'cmp';
  op: RelOp;
  left: Node;
  right: Node;
}
export interface InNode extends NodeBase {
  k: 'in';
  operand: PropNode;
  list: string[];
  not: boolean;
}
export type StrOp = 'CONTAINS' | 'STARTSWITH' | 'ENDSWITH';
export interface StrOpNode extends NodeBase {
  k: 'strop';
  op: StrOp;
  not: boolean;
  operand: Node;
  search: string;
}

export type Node =
  PropNode | ConstNode | NegNode | NotNode | CastNode | LogicNode | EqNode | CmpNode | InNode | StrOpNode;

/** RocketMQ's `instanceof BooleanExpression`. */
export function isBooleanExpression(n: Node): boolean {
  return n.k === 'const' ? n.type === 'bool' || n.type === 'null' : n.k !== 'prop' && n.k !== 'neg';
}

/** The static type of a node's value. */
export function valueType(n: Node): ValueType {
  switch (n.k) {
    case 'prop':
      return 'str';
    case 'const':
    case 'neg':
      return n.type;
    default:
      return 'bool';
  }
}

export const isNumericType = (t: ValueType): t is 'int' | 'long' | 'double' =>
  t === 'int' || t === 'long' || t === 'double';
