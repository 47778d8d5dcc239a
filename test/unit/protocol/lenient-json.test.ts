import { parseLenientJson, quoteNumericKeys } from '../../../src/protocol/lenient-json.js';

describe('fastjson output with unquoted numeric keys (a 4.9.x NameServer answering an old client)', () => {
  it('reads a route whose brokerAddrs keys are unquoted', () => {
    const text =
      '{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911",1:"127.0.0.1:10921"},"brokerName":"broker-a","cluster":"c"}],' +
      '"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}';
    const route = parseLenientJson(text) as { brokerDatas: { brokerAddrs: Record<string, string> }[] };
    expect(route.brokerDatas[0]?.brokerAddrs).toEqual({ '0': '127.0.0.1:10911', '1': '127.0.0.1:10921' });
  });
  it('leaves strings, arrays, values and standard JSON alone', () => {
    expect(quoteNumericKeys('{"a":"{0:1}","b":[1,2:3]}')).toBe('{"a":"{0:1}","b":[1,2:3]}');
    expect(quoteNumericKeys('{"s":"x\\",0:y"}')).toBe('{"s":"x\\",0:y"}');
    expect(quoteNumericKeys('{ -1 : 5, 12:{3:4}}')).toBe('{ "-1" : 5, "12":{"3":4}}');
    expect(parseLenientJson('{"0":"a"}')).toEqual({ '0': 'a' });
    expect(parseLenientJson('{0:250,1:{2:3}}')).toEqual({ '0': 250, '1': { '2': 3 } });
  });
  it('still rejects what is not JSON', () => {
    expect(() => parseLenientJson('{a:1}')).toThrow(SyntaxError);
    expect(() => parseLenientJson('{0:}')).toThrow(SyntaxError);
  });
});
