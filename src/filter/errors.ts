/**
 * The filter's typed errors. Every failure of compiling or evaluating a filter is one of these.
 * @pure
 */
import { RocketMQError, type RocketMQErrorOptions } from '../common/errors.js';

/**
 * A SQL92 expression does not compile: a lexical or syntax error, a check RocketMQ makes while
 * parsing (a literal out of range, an operand of the wrong kind), input left over after a complete
 * expression, or nesting beyond the depth limit. RocketMQ answers SUBSCRIPTION_PARSE_FAILED.
 */
export class Sql92ParseError extends RocketMQError {
  /** 0-based index of the UTF-16 code unit in the expression where the problem was found. */
  readonly position: number;
  /** What was expected at `position` (e.g. `"a string literal"`, `"end of input"`). */
  readonly expected: string;
  constructor(message: string, position: number, expected: string, options: RocketMQErrorOptions = {}) {
    super('ERR_SQL92_PARSE', `${message} at position ${position}: expected ${expected}`, options);
    this.position = position;
    this.expected = expected;
  }
}

/**
 * Evaluating a compiled SQL92 expression failed where RocketMQ throws (a property that does not parse
 * as the number it is compared with, a Boolean compared with a string). The broker treats the message
 * as not matching.
 */
export class Sql92EvaluationError extends RocketMQError {
  /** The Java exception RocketMQ raises in this case (`NumberFormatException`, `ClassCastException`). */
  readonly javaException: string;
  constructor(javaException: string, message: string) {
    super('ERR_SQL92_EVAL', message);
    this.javaException = javaException;
  }
}

/** A subscription expression cannot be turned into SubscriptionData (RocketMQ's FilterAPI throws). */
export class SubscriptionExpressionError extends RocketMQError {
  constructor(message: string) {
    super('ERR_SUBSCRIPTION_EXPRESSION', message);
  }
}
