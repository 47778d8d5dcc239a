import { remoteAddressMatcher } from '../../../../src/broker/acl/remote-address.js';

describe("RocketMQ's remote-address patterns (RemoteAddressStrategyFactory)", () => {
  it('blank matches nothing, * and its spellings match everything', () => {
    for (const p of [undefined, null, '', '  ']) expect(remoteAddressMatcher(p)('10.0.0.1')).toBe(false);
    for (const p of ['*', '*.*.*.*', '*:*:*:*:*:*:*:*']) {
      expect(remoteAddressMatcher(p)('10.0.0.1')).toBe(true);
      expect(remoteAddressMatcher(p)('::1')).toBe(true);
    }
  });

  it('one address, IPv4 and IPv6 (in any spelling, IPv4-mapped included)', () => {
    const m = remoteAddressMatcher('192.168.1.7');
    expect(m('192.168.1.7')).toBe(true);
    expect(m('::ffff:192.168.1.7')).toBe(true);
    expect(m('192.168.1.70')).toBe(false);
    const v6 = remoteAddressMatcher('fe80::1');
    expect(v6('FE80:0:0:0:0:0:0:0001')).toBe(true);
    expect(v6('fe80::2')).toBe(false);
  });

  it('lists: comma separated and {a,b} in the last part', () => {
    const comma = remoteAddressMatcher('10.0.0.1,10.0.0.2');
    expect(comma('10.0.0.2')).toBe(true);
    expect(comma('10.0.0.3')).toBe(false);
    const braces = remoteAddressMatcher('192.168.1.{1,2}');
    expect(braces('192.168.1.1')).toBe(true);
    expect(braces('192.168.1.2')).toBe(true);
    expect(braces('192.168.1.3')).toBe(false);
    const v6 = remoteAddressMatcher('1050::0005:0600:300c:{1,2}');
    expect(v6('1050:0:0:0:5:600:300c:2')).toBe(true);
    expect(v6('1050:0:0:0:5:600:300c:3')).toBe(false);
  });

  it('ranges: * and a-b in a part, anything after it *', () => {
    const star = remoteAddressMatcher('192.168.1.*');
    expect(star('192.168.1.0')).toBe(true);
    expect(star('192.168.1.255')).toBe(true);
    expect(star('192.168.2.1')).toBe(false);
    const two = remoteAddressMatcher('192.168.*.*');
    expect(two('192.168.9.9')).toBe(true);
    expect(two('192.169.0.1')).toBe(false);
    const range = remoteAddressMatcher('192.168.1.1-5');
    expect(range('192.168.1.1')).toBe(true);
    expect(range('192.168.1.5')).toBe(true);
    expect(range('192.168.1.6')).toBe(false);
    const mid = remoteAddressMatcher('10.1-5.*.*');
    expect(mid('10.3.200.1')).toBe(true);
    expect(mid('10.6.0.0')).toBe(false);
    expect(star('::1')).toBe(false);
    const v6 = remoteAddressMatcher('fe80::1-ff');
    expect(v6('fe80::ff')).toBe(true);
    expect(v6('fe80::100')).toBe(false);
  });

  it.each([
    ['300.1.1.1', /not an IP address/],
    ['192.168.1', /not an IP address/],
    ['192.168.1.5-1', /runs backwards/],
    ['192.168.1.1-300', /not a valid part/],
    ['192.168.*.1', /only \* may follow/],
    ['*.168.1.1', /first part/],
    ['192.168.{1,2}.3', /not an IP address/],
    ['192.168.1{1,2}', /last part/],
    ['192.168.1.{1,x}', /not an IP address/],
    ['hostname', /not an IP address/],
  ])('refuses %s', (pattern, message) => {
    expect(() => remoteAddressMatcher(pattern)).toThrow(message);
  });
});
