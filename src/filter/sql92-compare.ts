/**
 * RocketMQ's value comparison (`ComparisonExpression.__compare` with string conversion on, as the
 * broker parses), specialised by the static types of both operands:
 *
 * - same type: compare directly (Double.compareTo order for doubles);
 * - number against number: widen int -> long -> double;
 * - String against a number or Boolean: the String side is parsed as the other side's Java type
 *   (Integer.valueOf / Long.valueOf / Double.valueOf / Boolean.valueOf); a parse failure is an
 *   evaluation error;
 * - Boolean on the left of a String: Java casts the Boolean to String, a ClassCastException;
 * - Boolean against a number (either side): -1, never equal.
 *
 * `> >= < <=` with two Strings parse both as doubles first (ComparisonExpression.evaluate).
 * Operands are never null here: the callers apply the null rules before comparing.
 * @pure
 */
import { Sql92EvaluationError } from './errors.js';
import { isNumericType, type ConstValue, type ValueType } from './sql92-ast.js';
import { javaBooleanValueOf, javaDoubleCompare, parseJavaDouble, parseJavaInt, parseJavaLong } from './java-number.js';

/** Compares two non-null values; returns <0, 0 or >0 like Java's compareTo, or throws. */
export type Comparator = (lv: ConstValue, rv: ConstValue) => number;

function numberFormat(v: string, type: string): Sql92EvaluationError {
  return new Sql92EvaluationError(
    'NumberFormatException',
    `property value "${v}" is not a valid Java ${type} (NumberFormatException)`,
  );
}

export function toInt(v: string): number {
  const n = parseJavaInt(v);
  if (n === undefined) throw numberFormat(v, 'int');
  return n;
}
export function toLong(v: string): bigint {
  const n = parseJavaLong(v);
  if (n === undefined) throw numberFormat(v, 'long');
  return n;
}
export function toDouble(v: string): number {
  const n = parseJavaDouble(v);
  if (n === undefined) throw numberFormat(v, 'double');
  return n;
}

const cmpNum = (a: number, b: number): number => (a < b ? -1 : a > b ? 1 : 0);
const cmpBig = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);
const cmpBool = (a: boolean, b: boolean): number => (a === b ? 0 : a ? 1 : -1);

/** Converts a number of static type `t` to double (Java widening; a long rounds to nearest). */
const asDouble = (t: ValueType, v: ConstValue): number => (t === 'long' ? Number(v as bigint) : (v as number));

/** The type both numeric operands are widened to. */
function widen(a: 'int' | 'long' | 'double', b: 'int' | 'long' | 'double'): 'int' | 'long' | 'double' {
  if (a === 'double' || b === 'double') return 'double';
  if (a === 'long' || b === 'long') return 'long';
  return 'int';
}

function numericComparator(tl: 'int' | 'long' | 'double', tr: 'int' | 'long' | 'double'): Comparator {
  switch (widen(tl, tr)) {
    case 'int':
      return (l, r) => cmpNum(l as number, r as number);
    case 'long':
      return (l, r) => cmpBig(BigInt(l as number | bigint), BigInt(r as number | bigint));
    default:
      return (l, r) => javaDoubleCompare(asDouble(tl, l), asDouble(tr, r));
  }
}

/** Parses a String operand as a value of numeric/boolean type `t`. */
function parserFor(t: ValueType): (s: string) => ConstValue {
  switch (t) {
    case 'int':
      return toInt;
    case 'long':
      return toLong;
    case 'double':
      return toDouble;
    default:
      return javaBooleanValueOf;
  }
}

/** `__compare(lv, rv)` for values of static types `tl` and `tr` (neither 'null'). */
export function comparator(tl: ValueType, tr: ValueType): Comparator {
  if (isNumericType(tl) && isNumericType(tr)) return numericComparator(tl, tr);
  if (tl === 'str' && tr === 'str')
    return (l, r) => ((l as string) === (r as string) ? 0 : (l as string) < (r as string) ? -1 : 1);
  if (tl === 'bool' && tr === 'bool') return (l, r) => cmpBool(l as boolean, r as boolean);
  if (tl === 'bool' && tr === 'str') {
    return () => {
      throw new Sql92EvaluationError(
        'ClassCastException',
        'a Boolean cannot be compared with a String on its right (ClassCastException)',
      );
    };
  }
  if (tl === 'str') {
    // String on the left, number or Boolean on the right: parse the left side as the right's type
    const parse = parserFor(tr);
    const same = comparator(tr, tr);
    return (l, r) => same(parse(l as string), r);
  }
  if (tr === 'str') {
    const parse = parserFor(tl);
    const same = comparator(tl, tl);
    return (l, r) => same(l, parse(r as string));
  }
  // Boolean against a number, either way round: RocketMQ answers -1
  return () => -1;
}

/** The comparison `> >= < <=` use: two Strings compare as doubles, otherwise {@link comparator}. */
export function relationalComparator(tl: ValueType, tr: ValueType): Comparator {
  if (tl === 'str' && tr === 'str') {
    return (l, r) => {
      const a = parseJavaDouble(l as string);
      const b = parseJavaDouble(r as string);
      if (a === undefined || b === undefined) {
        throw new Sql92EvaluationError(
          'NumberFormatException',
          `It's illegal to compare string by '>=', '>', '<', '<='. lv=${String(l)}, rv=${String(r)}`,
        );
      }
      return javaDoubleCompare(a, b);
    };
  }
  return comparator(tl, tr);
}
