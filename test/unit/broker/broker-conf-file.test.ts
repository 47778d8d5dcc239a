import { BrokerConfFileError, brokerOptionsFromConf } from '../../../src/broker/broker-conf-file.js';
import { resolveBrokerOptions } from '../../../src/broker/broker-options.js';

describe("broker.conf (the CLI's --config)", () => {
  it('types broker and store settings by name, and takes RocketMQ names for the renamed ones', () => {
    const o = brokerOptionsFromConf(
      [
        '# comment',
        '! also a comment',
        'storePathRootDir = /var/lib/rmq',
        'listenPort=10911',
        'brokerClusterName=C1',
        'brokerName: broker-b',
        'autoCreateTopicEnable=FALSE',
        'remotingMaxConnectionsPerAddress=200',
        'maxMessageSize=1048576',
        'flushDiskType=SYNC_FLUSH',
        'messageDelayLevel=1s 5s',
        '',
      ].join('\r\n'),
      'broker.conf',
    );
    expect(o).toEqual({
      storePath: '/var/lib/rmq',
      remotingPort: 10911,
      clusterName: 'C1',
      brokerName: 'broker-b',
      autoCreateTopicEnable: false,
      remotingMaxConnectionsPerAddress: 200,
      store: { maxMessageSize: 1048576, flushDiskType: 'SYNC_FLUSH', messageDelayLevel: '1s 5s' },
    });
    expect(resolveBrokerOptions(o as { storePath: string }).remotingMaxConnectionsPerAddress).toBe(200);
  });

  it.each([
    ['noSuchSetting=1', 2, "unknown setting 'noSuchSetting'"],
    ['maxConnections=lots', 2, "maxConnections must be a whole number, got 'lots'"],
    ['dlqReadable=yes', 2, "dlqReadable must be true or false, got 'yes'"],
    ['just some words', 2, "expected key=value, got 'just some words'"],
    ['=1', 2, "expected key=value, got '=1'"],
    ['listenPort=1\nremotingPort=2', 3, 'remotingPort is already set on line 2'],
    ['maxMessageSize=1.5', 2, "maxMessageSize must be a whole number, got '1.5'"],
  ])('refuses %j naming its line', (body, line, detail) => {
    const text = `# first line\n${body}`;
    expect(() => brokerOptionsFromConf(text, 'b.conf')).toThrow(new BrokerConfFileError('b.conf', line, detail));
    expect(() => brokerOptionsFromConf(text, 'b.conf')).toThrow(`b.conf:${line}: ${detail}`);
  });
});
