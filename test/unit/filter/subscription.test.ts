// Tag rules of vectors/README.md ("Tags"), as RocketMQ's FilterAPI.buildSubscriptionData and SubscriptionData apply them.
import {
  ExpressionMessageFilter,
  ExpressionType,
  SubscriptionExpressionError,
  buildSubscriptionData,
  buildSubscriptionDataWithType,
  clientTagRecheck,
  isTagType,
  tagsHashCode,
} from '../../../src/filter/index.js';

const sorted = (a: string[]): string[] => [...a].sort();

describe('buildSubscriptionData (RocketMQ: FilterAPI.buildSubscriptionData)', () => {
  it.each([[null], [undefined], [''], ['*']])(
    'RocketMQ: only null, empty and exactly * subscribe to everything (%p)',
    (expr) => {
      const sub = buildSubscriptionData('T', expr);
      expect(sub).toMatchObject({
        topic: 'T',
        subString: '*',
        tagsSet: [],
        codeSet: [],
        expressionType: 'TAG',
        classFilterMode: false,
      });
    },
  );

  it.each([
    [' * ', ['*']],
    ['* ', ['*']],
    ['**', ['**']],
    ['*||*', ['*']],
    ['a || b', ['a', 'b']],
    ['a||b||a', ['a', 'b']],
    ['||a', ['a']],
    ['a||', ['a']],
    ['|||', ['|']],
    ['a|b', ['a|b']],
    ['a,b', ['a,b']],
    ['a OR b', ['a OR b']],
    ['\u00a0a\u00a0', ['\u00a0a\u00a0']],
    ['\u3000a', ['\u3000a']],
    ['\u0001a\u001f', ['a']],
    [' ', []],
    [' || ', []],
  ])('RocketMQ: split on ||, Java trim, empty parts dropped, duplicates collapsed (%j)', (expr, tags) => {
    const sub = buildSubscriptionData('T', expr);
    expect(sub.subString).toBe(expr);
    expect(sorted(sub.tagsSet)).toEqual(sorted(tags));
    expect(sub.codeSet.sort()).toEqual([...new Set(tags.map((t) => tagsHashCode(t)))].sort());
  });

  it.each([['||'], ['||||'], ['||||||']])('RocketMQ: %j throws "subString split error"', (expr) => {
    expect(() => buildSubscriptionData('T', expr)).toThrow(SubscriptionExpressionError);
    expect(() => buildSubscriptionData('T', expr)).toThrow(/subString split error/);
  });

  it('subVersion is the build time', () => {
    const before = Date.now();
    const v = buildSubscriptionData('T', 'a').subVersion;
    expect(v).toBeGreaterThanOrEqual(before);
    expect(v).toBeLessThanOrEqual(Date.now());
  });

  it('codeSet dedupes colliding hashes (Aa and BB)', () => {
    const sub = buildSubscriptionData('T', 'Aa || BB');
    expect(sorted(sub.tagsSet)).toEqual(['Aa', 'BB']);
    expect(sub.codeSet).toEqual([2112]);
  });
});

describe('buildSubscriptionDataWithType (RocketMQ: FilterAPI.build)', () => {
  it('a null type or TAG parses tags', () => {
    expect(buildSubscriptionDataWithType('T', 'a || b', null).tagsSet).toEqual(['a', 'b']);
    expect(buildSubscriptionDataWithType('T', 'a || b', 'TAG').codeSet).toEqual([97, 98]);
    expect(buildSubscriptionDataWithType('T', '', 'TAG').subString).toBe('*');
  });
  it.each([['SQL92'], [''], ['tag'], ['XX']])('RocketMQ: any other type (%j) keeps the expression unparsed', (type) => {
    const sub = buildSubscriptionDataWithType('T', 'a > 1 || b', type);
    expect(sub).toMatchObject({ subString: 'a > 1 || b', expressionType: type, tagsSet: [], codeSet: [] });
  });
  it.each([[null], [''], [undefined]])('RocketMQ: an empty expression with a non-tag type throws (%p)', (expr) => {
    expect(() => buildSubscriptionDataWithType('T', expr, 'SQL92')).toThrow(SubscriptionExpressionError);
  });
});

describe('isTagType (RocketMQ: ExpressionType.isTagType)', () => {
  it('null, empty and TAG are tag types', () => {
    expect([null, undefined, '', 'TAG'].map(isTagType)).toEqual([true, true, true, true]);
    expect(['SQL92', 'tag'].map(isTagType)).toEqual([false, false]);
    expect(ExpressionType).toEqual({ TAG: 'TAG', SQL92: 'SQL92' });
  });
});

describe('clientTagRecheck (RocketMQ: PullAPIWrapper.processPullResult)', () => {
  const sub = buildSubscriptionData('T', 'Aa || f5a5a608');
  it('keeps exact tag matches only', () => {
    expect(clientTagRecheck(sub, 'Aa')).toBe(true);
    expect(clientTagRecheck(sub, 'BB')).toBe(false); // same hash, other string
    expect(clientTagRecheck(sub, 'aa')).toBe(false);
    expect(clientTagRecheck(sub, ' Aa')).toBe(false);
  });
  it('drops untagged messages when the subscription has tags', () => {
    expect(clientTagRecheck(sub, null)).toBe(false);
    expect(clientTagRecheck(sub, undefined)).toBe(false);
    expect(clientTagRecheck(sub, '')).toBe(false);
  });
  it('keeps everything for * and for blank expressions', () => {
    expect(clientTagRecheck(buildSubscriptionData('T', '*'), null)).toBe(true);
    expect(clientTagRecheck(buildSubscriptionData('T', ' '), 'x')).toBe(true);
  });
  it('RocketMQ: the tag f5a5a608 hashes to 0, so the broker lets untagged messages through and the client drops them', () => {
    const f = new ExpressionMessageFilter(buildSubscriptionData('T', 'f5a5a608'));
    expect(f.isMatchedByConsumeQueue(tagsHashCode(null))).toBe(true);
    expect(clientTagRecheck(buildSubscriptionData('T', 'f5a5a608'), null)).toBe(false);
  });
  it('RocketMQ: a blank expression delivers nothing, not even untagged messages', () => {
    const f = new ExpressionMessageFilter(buildSubscriptionData('T', ' || '));
    expect(f.isMatchedByConsumeQueue(0)).toBe(false);
    expect(f.isMatchedByConsumeQueue(97)).toBe(false);
  });
});
