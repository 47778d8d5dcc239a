/**
 * MessageSelector (RocketMQ's MessageSelector): a tag expression or an SQL92 expression. `bySql`
 * compiles the expression on the client at once, so a malformed expression fails where it is written
 * (with the filter's Sql92ParseError: position and what was expected), not later on the broker.
 */
import { InvalidArgumentError } from '../../common/errors.js';
import { compileSql92 } from '../../filter/index.js';

export type ExpressionTypeName = 'TAG' | 'SQL92';

/**
 * What a subscription receives: `MessageSelector.byTag('TagA || TagB')` (or `'*'` for every message)
 * or `MessageSelector.bySql("amount > 50 AND region = 'eu'")` over the messages' properties. An SQL
 * expression is checked when the selector is created, so a mistake fails where it is written.
 */
export class MessageSelector {
  readonly expressionType: ExpressionTypeName;
  readonly expression: string;

  private constructor(expressionType: ExpressionTypeName, expression: string) {
    this.expressionType = expressionType;
    this.expression = expression;
    Object.freeze(this);
  }

  /**
   * A tag expression: `*` (everything, also for a missing or empty argument), a tag, or tags joined by
   * `||` (`TagA || TagB`).
   */
  static byTag(tag?: string | null): MessageSelector {
    if (tag != null && typeof tag !== 'string') throw new InvalidArgumentError('tag', 'must be a string');
    return new MessageSelector('TAG', tag == null || tag === '' ? '*' : tag);
  }

  /**
   * An SQL92 expression over message properties (`a > 5 AND region IN ('eu', 'us')`). Compiled at once:
   * a malformed expression throws the filter's `Sql92ParseError` here.
   */
  static bySql(sql: string): MessageSelector {
    if (typeof sql !== 'string' || sql.trim() === '')
      throw new InvalidArgumentError('sql', 'an SQL92 selector needs a non-empty expression');
    compileSql92(sql);
    return new MessageSelector('SQL92', sql);
  }

  /** A selector, or a plain string taken as a tag expression. */
  static from(selector: MessageSelector | string | null | undefined): MessageSelector {
    if (selector instanceof MessageSelector) return selector;
    return MessageSelector.byTag(selector);
  }

  toString(): string {
    return `${this.expressionType}(${this.expression})`;
  }
}
