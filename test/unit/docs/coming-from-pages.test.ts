/**
 * The migration pages map each call to its real equivalent: RocketMQ's setNamesrvAddr is
 * `namesrvAddr` (not the bundled broker's HTTP `endpoints`), KafkaJS's `consumer.seek` is
 * `LitePullConsumer.seek`, and KafkaJS's `consumer.on(...)` is the clients' own `on`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../support/interface-members.js';

const read = (f: string): string => readFileSync(path.join(repoRoot, 'docs', f), 'utf8');
const rowOf = (page: string, first: RegExp): string =>
  page.split('\n').find((l) => l.startsWith('|') && first.test(l)) ?? '';

test('coming from Java: setNamesrvAddr is namesrvAddr', () => {
  const row = rowOf(read('coming-from-java.md'), /^\| `new DefaultMQProducer\("pg"\); setNamesrvAddr/);
  expect(row).toMatch(/\| `new Producer\(\{ producerGroup: 'pg', namesrvAddr: /);
  expect(row).not.toMatch(/endpoints/);
});

test('coming from KafkaJS: seek is LitePullConsumer.seek, events are consumer.on', () => {
  const page = read('coming-from-kafkajs.md');
  expect(rowOf(page, /^\| `consumer\.seek\(/).split('|')[2]).toMatch(/`LitePullConsumer\.seek\(mq, offset\)`/);
  expect(rowOf(page, /^\| `consumer\.on\(/).split('|')[2]).toMatch(/`consumer\.on\('rebalance'/);
});

test('the events page shows the clients’ on / once / off', () => {
  const page = read('events.md');
  for (const call of ['.on(', '.once(', 'consumer.off(']) expect(page).toContain(call);
});
