/**
 * The JSON header has two readers: the built-in parser for strict headers (what every client writes)
 * and the lenient fastjson-like one for everything else. Whenever the strict reader answers, it must
 * give exactly the lenient reader's command, extFields order included.
 */
import fc from 'fast-check';
import { decodeLenientJsonHeader, decodeStrictJsonHeader } from '../../../src/remoting/json-header.js';

function same(text: string): 'strict' | 'lenient' {
  const strict = decodeStrictJsonHeader(text);
  let lenient: unknown;
  try {
    lenient = decodeLenientJsonHeader(text, 0);
  } catch (e) {
    lenient = e;
  }
  if (strict === undefined) return 'lenient';
  expect(lenient).toEqual(strict);
  expect(Object.keys((lenient as typeof strict).extFields ?? {})).toEqual(Object.keys(strict.extFields ?? {}));
  return 'strict';
}

describe('strict JSON header reader', () => {
  test('what RocketMQ clients write is read by the strict reader, with the same result', () => {
    const pull =
      '{"code":11,"extFields":{"queueId":"4","maxMsgNums":"32","sysFlag":"2","suspendTimeoutMillis":"15000",' +
      '"commitOffset":"0","bname":"broker-a","topic":"T","queueOffset":"0","expressionType":"TAG",' +
      '"subVersion":"1796157222891","consumerGroup":"CG"},"flag":0,"language":"JAVA","opaque":12,' +
      '"serializeTypeCurrentRPC":"JSON","version":399}';
    expect(same(pull)).toBe('strict');
    expect(same('{"code":0,"flag":1,"language":"JAVA","opaque":3,"remark":"FOUND","version":399}')).toBe('strict');
    expect(same('{"code":0,"extFields":{},"flag":1,"opaque":-3,"version":0,"unknown":[1,{"a":null}]}')).toBe('strict');
    expect(same('{"code":1e2,"flag":1.0,"extFields":{"__proto__":"x","a\\u0000b":"\\ud800","é":"ü"}}')).toBe('strict');
  });

  test('a key sequence seen before (its order remembered) reads as the first time, values and order', () => {
    const ext = (pairs: string): string => `{"code":11,"extFields":{${pairs}},"opaque":1}`;
    for (let round = 0; round < 3; round++) {
      expect(same(ext(`"topic":"T${round}","queueId":"${round}","bname":"b"`))).toBe('strict');
      expect(same(ext(`"topic":"T","queueId":"1"`))).toBe('strict');
      expect(same(ext(`"topic":"T","queueId":"1","bname":"b","extra":"${round}"`))).toBe('strict');
      expect(same(ext(`"queueId":"1","topic":"T"`))).toBe('strict');
      expect(same(ext(`"topic":"T","queueId":${round}`))).toBe('lenient');
      expect(same(ext(`"topic":"T","0":"x"`))).toBe('lenient');
    }
  });

  test.each([
    ['a smart-matched name', '{"Code":11}'],
    ['a string number', '{"code":"11"}'],
    ['a fraction', '{"code":1.5}'],
    ['outside int32', '{"opaque":2147483648}'],
    ['an unknown language', '{"language":"COBOL"}'],
    ['a language ordinal', '{"language":0}'],
    ['a null remark', '{"remark":null}'],
    ['null extFields', '{"extFields":null}'],
    ['a number in extFields', '{"extFields":{"queueId":3}}'],
    ['an index key in extFields', '{"extFields":{"b":"1","0":"x"}}'],
    ['single quotes', "{'code':11}"],
    ['a trailing comma', '{"code":11,}'],
    ['a byte-order mark', '\ufeff{"code":11}'],
    ['not an object', '[1]'],
  ])('%s is left to the lenient reader', (_name, text) => {
    expect(same(text)).toBe('lenient');
  });

  test('random headers: whenever the strict reader answers, the lenient one agrees', () => {
    const str = fc.string({ unit: 'binary', maxLength: 12 });
    const header = fc.record(
      {
        code: fc.oneof(fc.integer({ min: -0x80000000, max: 0x7fffffff }), fc.double(), str),
        flag: fc.integer(),
        opaque: fc.integer(),
        language: fc.constantFrom('JAVA', 'GO', 'CPP', 'NOPE', 3),
        remark: fc.option(str),
        extFields: fc.option(fc.dictionary(str, fc.oneof(str, str, fc.integer(), fc.constant(null)))),
        version: fc.integer({ min: 0, max: 1000 }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(header, (h) => {
        same(JSON.stringify(h));
      }),
      { numRuns: 2000 },
    );
  });
});
