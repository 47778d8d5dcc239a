import { MessageSelector } from '../../../../src/index.js';
import { Sql92ParseError } from '../../../../src/filter/index.js';
import { InvalidArgumentError } from '../../../../src/common/errors.js';

test('byTag: expression and type; empty means everything', () => {
  expect(MessageSelector.byTag('TagA || TagB')).toMatchObject({ expressionType: 'TAG', expression: 'TagA || TagB' });
  expect(MessageSelector.byTag().expression).toBe('*');
  expect(MessageSelector.byTag('').expression).toBe('*');
  expect(MessageSelector.byTag(null).expression).toBe('*');
  expect(MessageSelector.from('TagC')).toMatchObject({ expressionType: 'TAG', expression: 'TagC' });
});

test('bySql compiles at once: a valid expression is kept as written', () => {
  const s = MessageSelector.bySql("a > 5 AND region IN ('eu', 'us')");
  expect(s.expressionType).toBe('SQL92');
  expect(s.expression).toBe("a > 5 AND region IN ('eu', 'us')");
  expect(Object.isFrozen(s)).toBe(true);
  expect(MessageSelector.from(s)).toBe(s);
});

test.each(['a >', 'a = 1 AND', 'a == 1', "a = 'x", 'a = 1 b = 2'])(
  'bySql throws the Sql92ParseError where the selector is written: %s',
  (expr) => {
    expect(() => MessageSelector.bySql(expr)).toThrow(Sql92ParseError);
  },
);

test('bySql needs an expression', () => {
  expect(() => MessageSelector.bySql('')).toThrow(InvalidArgumentError);
  expect(() => MessageSelector.bySql('   ')).toThrow(InvalidArgumentError);
});
