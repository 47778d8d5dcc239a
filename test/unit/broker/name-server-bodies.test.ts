/**
 * The name-server bodies of the remoting port, as RocketMQ 4.9.8's name server writes them with fastjson.
 */
import {
  encodeClusterInfo,
  encodeKvTable,
  encodeRouteForNameServer,
  sortedJson,
  wantsStandardJson,
} from '../../../src/broker/remoting/name-server.js';
import type { TopicRouteData } from '../../../src/protocol/index.js';

const route: TopicRouteData = {
  brokerDatas: [{ cluster: 'DefaultCluster', brokerName: 'broker-a', brokerAddrs: { '0': 'http://127.0.0.1:8081' } }],
  queueDatas: [{ brokerName: 'broker-a', readQueueNums: 4, writeQueueNums: 2, perm: 6, topicSysFlag: 0 }],
};

describe('name-server bodies', () => {
  test('RocketMQ: the route is standard JSON from client version V4_9_4 (401) or with acceptStandardJsonOnly', () => {
    expect(wantsStandardJson(401, undefined)).toBe(true);
    expect(wantsStandardJson(409, null)).toBe(true);
    expect(wantsStandardJson(400, undefined)).toBe(false);
    expect(wantsStandardJson(121, 'true')).toBe(true);
    expect(wantsStandardJson(121, 'TRUE')).toBe(true);
    expect(wantsStandardJson(121, 'false')).toBe(false);
  });

  test('the route names the remoting address as master "0", keys sorted, with filterServerTable', () => {
    const body = encodeRouteForNameServer(route, '127.0.0.1:10911', true).toString();
    expect(body).toBe(
      '{"brokerDatas":[{"brokerAddrs":{"0":"127.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster"}],' +
        '"filterServerTable":{},' +
        '"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":2}]}',
    );
    expect(JSON.parse(body)).toBeTruthy();
  });

  test('RocketMQ: older clients get fastjson unquoted Long keys in brokerAddrs', () => {
    const body = encodeRouteForNameServer(route, '127.0.0.1:10911', false).toString();
    expect(body).toContain('"brokerAddrs":{0:"127.0.0.1:10911"}');
    expect(() => JSON.parse(body)).toThrow();
  });

  test('ClusterInfo and KVTable', () => {
    const cluster = encodeClusterInfo({
      clusterName: 'C1',
      brokerName: 'b1',
      remotingAddress: '127.0.0.1:1234',
    }).toString();
    expect(cluster).toBe(
      '{"brokerAddrTable":{"b1":{"brokerAddrs":{0:"127.0.0.1:1234"},"brokerName":"b1","cluster":"C1"}},' +
        '"clusterAddrTable":{"C1":["b1"]}}',
    );
    expect(encodeKvTable({ z: '1', a: '2' }).toString()).toBe('{"table":{"a":"2","z":"1"}}');
  });

  test('sortedJson sorts nested object keys and keeps array order', () => {
    expect(sortedJson({ b: [{ d: 1, c: 2 }], a: null })).toBe('{"a":null,"b":[{"c":2,"d":1}]}');
  });
});
