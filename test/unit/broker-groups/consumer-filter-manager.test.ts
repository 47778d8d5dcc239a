import { ConsumerFilterManager } from '../../../src/broker/consumer-filter-manager.js';
import type { BrokerSubscriptionData } from '../../../src/broker/broker-context.js';
import { ManualClock } from '../../support/manual-clock.js';

const sql = (topic: string, subString: string, subVersion: number): BrokerSubscriptionData => ({
  topic,
  subString,
  tagsSet: [],
  codeSet: [],
  subVersion,
  expressionType: 'SQL92',
  classFilterMode: false,
});
const tag = (topic: string): BrokerSubscriptionData => ({ ...sql(topic, '*', 1), expressionType: 'TAG' });

function setup() {
  const clock = new ManualClock();
  const warnings: unknown[] = [];
  const logger = { debug() {}, info() {}, error() {}, warn: (o: unknown) => warnings.push(o) };
  return { clock, warnings, fm: new ConsumerFilterManager({ clock, logger }) };
}

describe('ConsumerFilterManager (RocketMQ: ConsumerFilterManager.register)', () => {
  test('compiles SQL92 subscriptions per topic and group, with clientVersion = subVersion and bornTime', () => {
    const { fm, clock } = setup();
    fm.register('g', [sql('T', 'a > 5', 100), tag('%RETRY%g')]);
    const data = fm.get('T', 'g');
    expect(data).toMatchObject({ consumerGroup: 'g', topic: 'T', expression: 'a > 5', expressionType: 'SQL92' });
    expect(data?.clientVersion).toBe(100);
    expect(data?.bornTime).toBe(clock.now());
    expect(data?.matches({ a: '6' })).toBe(true);
    expect(data?.matches({ a: '5' })).toBe(false);
    expect(data?.matches({ a: 'x' })).toBe(false); // evaluation error → no match
    expect(data?.matches(null)).toBe(false); // missing property → null → no match
    expect(fm.get('%RETRY%g', 'g')).toBeUndefined(); // tag subscriptions are not kept
    expect(fm.get('T', 'other')).toBeUndefined();
  });

  test('RocketMQ: an expression that does not compile is dropped silently (a warning is logged)', () => {
    const { fm, warnings } = setup();
    fm.register('g', [sql('T', 'a >', 1)]);
    expect(fm.get('T', 'g')).toBeUndefined();
    expect(warnings).toHaveLength(1);
  });

  test('a newer version with the same expression only moves clientVersion; an older one changes nothing', () => {
    const { fm, clock } = setup();
    fm.register('g', [sql('T', 'a > 5', 100)]);
    const first = fm.get('T', 'g');
    clock.advance(10);
    fm.register('g', [sql('T', 'a > 5', 200)]);
    expect(fm.get('T', 'g')).toBe(first);
    expect(first?.clientVersion).toBe(200);
    fm.register('g', [sql('T', 'b = 1', 150)]);
    expect(fm.get('T', 'g')?.expression).toBe('a > 5');
  });

  test('a newer, changed expression is compiled anew; if it does not compile the old filter is removed', () => {
    const { fm } = setup();
    fm.register('g', [sql('T', 'a > 5', 100)]);
    fm.register('g', [sql('T', "b = 'x'", 200)]);
    expect(fm.get('T', 'g')?.expression).toBe("b = 'x'");
    expect(fm.get('T', 'g')?.matches({ b: 'x' })).toBe(true);
    fm.register('g', [sql('T', 'b = ', 300)]);
    expect(fm.get('T', 'g')).toBeUndefined();
  });

  test('topics no longer subscribed and groups that left are marked dead, revived by the same version', () => {
    const { fm } = setup();
    fm.register('g', [sql('T', 'a > 5', 100), sql('U', 'a < 5', 100)]);
    fm.register('g', [sql('T', 'a > 5', 100)]);
    expect(fm.get('U', 'g')?.isDead).toBe(true);
    expect(fm.get('T', 'g')?.isDead).toBe(false);
    fm.unRegister('g');
    expect(fm.get('T', 'g')?.isDead).toBe(true);
    fm.register('g', [sql('T', 'a > 5', 100)]);
    expect(fm.get('T', 'g')?.isDead).toBe(false);
  });

  test('dead filters are forgotten after the retention time', () => {
    const clock = new ManualClock();
    const fm = new ConsumerFilterManager({ clock, deadRetentionMs: 1000 });
    fm.register('g', [sql('T', 'a > 5', 100)]);
    fm.unRegister('g');
    clock.advance(1001);
    fm.register('h', []);
    expect(fm.get('T', 'g')).toBeUndefined();
  });
});
