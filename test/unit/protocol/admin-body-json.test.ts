import { FastJsonMap, parseFastJson, toFastJson } from '../../../src/protocol/admin-body-json.js';
import { DecodeError } from '../../../src/common/errors.js';
import { ConsumeTpsMeter } from '../../../src/broker/consume-tps-meter.js';

describe('toFastJson', () => {
  test('fastjson: keys sorted, nulls left out, MessageQueue map keys written as objects', () => {
    const table = new FastJsonMap([
      [
        { topic: 'T', queueId: 0, brokerName: 'b' },
        { consumerOffset: 1, brokerOffset: 3 },
      ],
    ]);
    expect(toFastJson({ offsetTable: table, consumeTps: 0.5, gone: null })).toBe(
      '{"consumeTps":0.5,"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"brokerOffset":3,"consumerOffset":1}}}',
    );
    expect(toFastJson(new Map([['a', [1, 'x']]]))).toBe('{"a":[1,"x"]}');
  });
});

describe('parseFastJson', () => {
  test('reads object keys back into a FastJsonMap and plain keys into objects', () => {
    const v = parseFastJson('{"offsetTable":{{"brokerName":"b","queueId":1,"topic":"T"}:7}}') as {
      offsetTable: FastJsonMap;
    };
    expect(v.offsetTable).toBeInstanceOf(FastJsonMap);
    expect(v.offsetTable.entries).toEqual([[{ brokerName: 'b', queueId: 1, topic: 'T' }, 7]]);
    expect(parseFastJson('{"offsetTable":{"T@g":{0:250,1:248}}}')).toEqual({
      offsetTable: { 'T@g': { 0: 250, 1: 248 } },
    });
    expect(parseFastJson(' [true, false, null, -1.5e2, "a\\"b\\u0041"] ')).toEqual([true, false, null, -150, 'a"bA']);
  });

  test('round-trips what toFastJson writes', () => {
    const value = { a: new FastJsonMap([[{ q: 1 }, { x: 'y' }]]), b: [1, 2] };
    const back = parseFastJson(toFastJson(value)) as { a: FastJsonMap; b: number[] };
    expect(back.a.entries).toEqual([[{ q: 1 }, { x: 'y' }]]);
    expect(back.b).toEqual([1, 2]);
  });

  test('malformed input throws a DecodeError naming the position', () => {
    expect(() => parseFastJson('{"a":1')).toThrow(DecodeError);
    expect(() => parseFastJson('{"a":1} x')).toThrow(/position 8/);
    expect(() => parseFastJson('"open')).toThrow(/unterminated string/);
  });
});

describe('ConsumeTpsMeter', () => {
  test('messages per second over the last minute; old buckets drop out', () => {
    const m = new ConsumeTpsMeter();
    m.add('g', 60, 1_000);
    m.add('g', 60, 30_500);
    expect(m.tps('g', 31_000)).toBe(2);
    expect(m.tps('g', 61_000)).toBe(1); // the first bucket (second 1) left the window
    expect(m.tps('g', 200_000)).toBe(0);
    expect(m.tps('other', 31_000)).toBe(0);
    m.add('g', -5, 31_000);
    expect(m.tps('g', 31_000)).toBe(2);
  });
});
