// The reference vectors produced by RocketMQ's own classes: sql92, tagexpr and taghash samples.
import { readFileSync } from 'node:fs';
import {
  ExpressionMessageFilter,
  Sql92EvaluationError,
  Sql92ParseError,
  SubscriptionExpressionError,
  buildSubscriptionData,
  buildSubscriptionDataWithType,
  clientTagRecheck,
  compileSql92,
  tagsHashCode,
} from '../../../src/filter/index.js';
import { javaStringHashCode, javaUtf8Encode, javaUtf8RoundTrip } from '../../../src/common/codec/java-string.js';
import { vectorPath } from '../../support/vectors.js';

const load = <T>(file: string): T => JSON.parse(readFileSync(vectorPath(file), 'utf8')) as T;

interface Sql92Case {
  expr: string;
  props: Record<string, string>;
  result: boolean | null | 'error';
  errorKind?: 'parse' | 'eval';
  matches: boolean;
  trailing: boolean;
  group: string;
}

type Outcome = boolean | null | 'parse' | 'eval';

function run(expr: string, props: Record<string, string>): { outcome: Outcome; matches: boolean | undefined } {
  let compiled;
  try {
    compiled = compileSql92(expr);
  } catch (e) {
    if (e instanceof Sql92ParseError) return { outcome: 'parse', matches: undefined };
    throw e;
  }
  const matches = compiled.matches(props);
  try {
    return { outcome: compiled.evaluate(props), matches };
  } catch (e) {
    if (e instanceof Sql92EvaluationError) return { outcome: 'eval', matches };
    throw e;
  }
}

describe('sql92-sample.json (RocketMQ SelectorParser + evaluator)', () => {
  const { cases } = load<{ cases: Sql92Case[] }>('sql92-sample.json');
  it('has cases', () => expect(cases.length).toBeGreaterThan(100));
  it.each(
    cases.map(
      (c, i) => [`#${i} ${JSON.stringify(c.expr).slice(0, 80)} ${JSON.stringify(c.props).slice(0, 60)}`, c] as const,
    ),
  )('%s', (_name, c) => {
    const { outcome, matches } = run(c.expr, c.props);
    if (c.trailing) {
      // rocketmq-ts: input left over after a complete expression is a parse error
      expect(outcome).toBe('parse');
      return;
    }
    const expected: Outcome = c.result === 'error' ? (c.errorKind as 'parse' | 'eval') : c.result;
    expect(outcome).toBe(expected);
    if (outcome !== 'parse') expect(matches).toBe(c.matches);
  });
});

interface TagExprCase {
  expr: string | null;
  subString?: string;
  expressionType?: string;
  tagsSet?: string[];
  codeSet?: number[];
  error?: unknown;
  messages?: {
    tag: string | null;
    tagsCode: number;
    brokerMatch: boolean;
    clientRecheck: boolean;
    delivered: boolean;
  }[];
}
interface BuildWithTypeCase {
  expr: string | null;
  type: string | null;
  subString?: string;
  expressionType?: string;
  tagsSet?: string[];
  codeSet?: number[];
  error?: unknown;
}

const sorted = <T>(a: T[]): T[] => [...a].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));

describe('tagexpr-sample.json (FilterAPI.buildSubscriptionData, ExpressionMessageFilter, client re-check)', () => {
  const data = load<{ cases: TagExprCase[]; buildWithTypeCases?: BuildWithTypeCase[] }>('tagexpr-sample.json');
  it.each(data.cases.map((c) => [JSON.stringify(c.expr), c] as const))('%s', (_name, c) => {
    if (c.error !== undefined || c.subString === undefined) {
      expect(() => buildSubscriptionData('TopicTest', c.expr)).toThrow(SubscriptionExpressionError);
      return;
    }
    const before = Date.now();
    const sub = buildSubscriptionData('TopicTest', c.expr);
    expect(sub.topic).toBe('TopicTest');
    expect(sub.subString).toBe(c.subString);
    expect(sub.expressionType).toBe(c.expressionType);
    expect(sorted(sub.tagsSet)).toEqual(sorted(c.tagsSet ?? []));
    expect(sorted(sub.codeSet)).toEqual(sorted(c.codeSet ?? []).map(Number));
    expect(sub.classFilterMode).toBe(false);
    expect(sub.subVersion).toBeGreaterThanOrEqual(before);
    const filter = new ExpressionMessageFilter(sub);
    for (const m of c.messages ?? []) {
      expect(tagsHashCode(m.tag)).toBe(Number(m.tagsCode));
      const broker =
        filter.isMatchedByConsumeQueue(Number(m.tagsCode)) &&
        filter.isMatchedByCommitLog(null, m.tag === null ? {} : { TAGS: m.tag });
      expect([m.tag, broker]).toEqual([m.tag, m.brokerMatch]);
      expect([m.tag, clientTagRecheck(sub, m.tag)]).toEqual([m.tag, m.clientRecheck]);
      expect([m.tag, broker && clientTagRecheck(sub, m.tag)]).toEqual([m.tag, m.delivered]);
    }
  });

  const withType = data.buildWithTypeCases ?? [];
  if (withType.length > 0) {
    it.each(withType.map((c) => [`${JSON.stringify(c.expr)} / ${JSON.stringify(c.type)}`, c] as const))(
      'FilterAPI.build %s',
      (_name, c) => {
        if (c.error !== undefined || c.subString === undefined) {
          expect(() => buildSubscriptionDataWithType('TopicTest', c.expr, c.type)).toThrow(SubscriptionExpressionError);
          return;
        }
        const sub = buildSubscriptionDataWithType('TopicTest', c.expr, c.type);
        expect(sub.subString).toBe(c.subString);
        expect(sub.expressionType).toBe(c.expressionType);
        expect(sorted(sub.tagsSet)).toEqual(sorted(c.tagsSet ?? []));
        expect(sorted(sub.codeSet)).toEqual(sorted(c.codeSet ?? []).map(Number));
      },
    );
  }
});

interface TagHashCase {
  tag: string;
  hashCode: number;
  tagsCode: number | string;
  utf8Hex: string;
  utf16Length: number;
  afterUtf8RoundTrip?: string;
  afterUtf8RoundTripTagsCode?: number | string;
}

describe('taghash-sample.json (tagsString2tagsCode = String.hashCode)', () => {
  const { cases } = load<{ cases: TagHashCase[] }>('taghash-sample.json');
  it.each(cases.map((c) => [JSON.stringify(c.tag), c] as const))('%s', (_name, c) => {
    expect(javaStringHashCode(c.tag)).toBe(c.hashCode);
    expect(tagsHashCode(c.tag)).toBe(Number(c.tagsCode));
    expect(javaUtf8Encode(c.tag).toString('hex')).toBe(c.utf8Hex);
    expect(c.tag.length).toBe(c.utf16Length);
    if (c.afterUtf8RoundTrip !== undefined) {
      expect(javaUtf8RoundTrip(c.tag)).toBe(c.afterUtf8RoundTrip);
      expect(tagsHashCode(javaUtf8RoundTrip(c.tag))).toBe(Number(c.afterUtf8RoundTripTagsCode));
    }
  });
});
