// Java number parsing as RocketMQ's evaluator uses it (values checked against the JDK).
import {
  javaBooleanValueOf,
  javaDecimalDigit,
  javaDoubleCompare,
  javaTrim,
  parseJavaDouble,
  parseJavaInt,
  parseJavaLong,
} from '../../../src/filter/java-number.js';

describe('Integer.valueOf (radix 10)', () => {
  it.each([
    ['0', 0],
    ['3', 3],
    ['+3', 3],
    ['-3', -3],
    ['03', 3],
    ['-0', 0],
    ['2147483647', 2147483647],
    ['-2147483648', -2147483648],
    ['٣', 3],
    ['١٢', 12],
    ['１２', 12],
    ['꘤', 4],
    ['00000000000000000000000005', 5],
  ])('%j is %d', (s, v) => {
    expect(Object.is(parseJavaInt(s), v)).toBe(true);
  });
  it.each([
    '',
    '+',
    '-',
    ' 3',
    '3 ',
    '3.0',
    '3e0',
    '2147483648',
    '-2147483649',
    '0x10',
    '1_0',
    '+-1',
    'abc',
    '𝟑',
    '3L',
  ])('%j is a NumberFormatException', (s) => {
    expect(parseJavaInt(s)).toBeUndefined();
  });
});

describe('Long.valueOf (radix 10)', () => {
  it.each([
    ['9223372036854775807', 9223372036854775807n],
    ['-9223372036854775808', -9223372036854775808n],
    ['9223372036854775806', 9223372036854775806n],
    ['+00042', 42n],
    ['٣', 3n],
    ['-0', 0n],
  ])('%j is %s', (s, v) => {
    expect(parseJavaLong(s)).toBe(v);
  });
  it.each(['', '-', '9223372036854775808', '-9223372036854775809', '1.0', ' 1', '1L', '99999999999999999999'])(
    '%j is a NumberFormatException',
    (s) => {
      expect(parseJavaLong(s)).toBeUndefined();
    },
  );
});

describe('Double.valueOf', () => {
  it.each([
    ['1', 1],
    [' 6 ', 6],
    ['\t6\n', 6],
    ['6d', 6],
    ['6f', 6],
    ['6.5F', 6.5],
    ['6D', 6],
    ['1.', 1],
    ['.5', 0.5],
    ['+.5', 0.5],
    ['-0', -0],
    ['-0.0', -0],
    ['1e3', 1000],
    ['1E+3', 1000],
    ['1e-3', 0.001],
    ['1e400', Infinity],
    ['1e-400', 0],
    ['NaN', NaN],
    ['-NaN', NaN],
    ['+NaN', NaN],
    ['Infinity', Infinity],
    ['-Infinity', -Infinity],
    ['0x1p3', 8],
    ['0X1.8P1', 3],
    ['-0x1p-1', -0.5],
    ['0x.8p1', 1],
    ['0x1.p1', 2],
    ['0x1p3d', 8],
    ['0x1p-1074', 5e-324],
    ['0x1p-1075', 0],
    ['0x1.8p-1074', 1e-323],
    ['0x1.00000000000008p0', 1],
    ['0x1.00000000000018p0', 1.0000000000000004],
    ['0x1p1024', Infinity],
    ['0x0p99999999999', 0],
    ['0x1p99999999999', Infinity],
    ['2.4703282292062328e-324', 5e-324],
    ['2.4703282292062327e-324', 0],
    ['1.7976931348623157e308', 1.7976931348623157e308],
    ['00000000000000000000000001.5', 1.5],
  ])('%j is %d', (s, v) => {
    expect(Object.is(parseJavaDouble(s), v)).toBe(true);
  });
  it.each([
    '',
    ' ',
    '.',
    '+',
    'e5',
    '1e',
    '1e+',
    '1.5.3',
    'Infinityd',
    'NaNd',
    'nan',
    'infinity',
    '1_0',
    '٣',
    '6dd',
    '0x1',
    '0x1.8',
    '0xp1',
    '0x1pA',
    '1 2',
    '\u00a06',
    '1L',
    '0x',
  ])('%j is a NumberFormatException', (s) => {
    expect(parseJavaDouble(s)).toBeUndefined();
  });
});

describe('Double.compare order', () => {
  it('NaN is above everything and equal to itself', () => {
    expect(javaDoubleCompare(NaN, Infinity)).toBe(1);
    expect(javaDoubleCompare(Infinity, NaN)).toBe(-1);
    expect(javaDoubleCompare(NaN, NaN)).toBe(0);
  });
  it('-0.0 is below 0.0', () => {
    expect(javaDoubleCompare(-0, 0)).toBe(-1);
    expect(javaDoubleCompare(0, -0)).toBe(1);
    expect(javaDoubleCompare(-0, -0)).toBe(0);
  });
  it('numeric order otherwise', () => {
    expect(javaDoubleCompare(1, 2)).toBe(-1);
    expect(javaDoubleCompare(-Infinity, -1e308)).toBe(-1);
    expect(javaDoubleCompare(2.5, 2.5)).toBe(0);
  });
});

describe('helpers', () => {
  it('Boolean.valueOf is true only for "true" in any case', () => {
    expect(['true', 'TRUE', 'tRuE'].map(javaBooleanValueOf)).toEqual([true, true, true]);
    expect(['yes', ' true', 'true ', '1', '', 'truе'].map(javaBooleanValueOf)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });
  it('String.trim strips chars <= U+0020 only', () => {
    expect(javaTrim('\u0000\u001f a \t')).toBe('a');
    expect(javaTrim('\u00a0a\u3000')).toBe('\u00a0a\u3000');
  });
  it('Character.digit(c, 10) accepts BMP decimal digits of every script', () => {
    expect(javaDecimalDigit('7'.charCodeAt(0))).toBe(7);
    expect(javaDecimalDigit(0x0669)).toBe(9);
    expect(javaDecimalDigit(0xff10)).toBe(0);
    expect(javaDecimalDigit(0x00b2)).toBe(-1); // superscript two is not Nd
    expect(javaDecimalDigit(0x2160)).toBe(-1); // Roman numeral one
  });
});
