/**
 * docs/configuration.md stays true: every option of every client's and the broker's options type has a
 * row in its section, no row names an option that does not exist, each default in the table is the
 * exported default, and every flag of `rocketmq-ts broker` is listed.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_ADMIN_CLIENT_OPTIONS } from '../../../src/client/admin/admin-client.js';
import { DEFAULT_CLIENT_OPTIONS } from '../../../src/client/instance/client-options.js';
import { DEFAULT_LITE_PULL_CONSUMER_OPTIONS } from '../../../src/client/consumer/lite/lite-pull-consumer-options.js';
import { DEFAULT_PRODUCER_OPTIONS } from '../../../src/client/producer/producer-options.js';
import { DEFAULT_PULL_CONSUMER_OPTIONS } from '../../../src/client/consumer/pull/pull-consumer-options.js';
import { DEFAULT_PUSH_CONSUMER_OPTIONS } from '../../../src/client/consumer/push/push-consumer-options.js';
import { BROKER_DEFAULTS } from '../../../src/broker/broker-options.js';
import { STORE_DEFAULTS } from '../../../src/store/options.js';
import { interfaceMembers, markdownTable, repoRoot } from '../../support/interface-members.js';

const page = readFileSync(path.join(repoRoot, 'docs/configuration.md'), 'utf8');

interface Section {
  title: string;
  file: string;
  iface: string;
  defaults: Readonly<Record<string, unknown>>;
  /** Members of the type that are not options of this section (set by the broker itself). */
  notOptions?: string[];
}

const sections: Section[] = [
  {
    title: 'Common client options',
    file: 'src/client/instance/client-options.ts',
    iface: 'ClientOptions',
    defaults: DEFAULT_CLIENT_OPTIONS,
  },
  {
    title: 'Producer',
    file: 'src/client/producer/producer-options.ts',
    iface: 'ProducerOptions',
    defaults: DEFAULT_PRODUCER_OPTIONS,
  },
  {
    title: 'PushConsumer',
    file: 'src/client/consumer/push/push-consumer-options.ts',
    iface: 'PushConsumerOptions',
    defaults: DEFAULT_PUSH_CONSUMER_OPTIONS,
  },
  {
    title: 'PullConsumer',
    file: 'src/client/consumer/pull/pull-consumer-options.ts',
    iface: 'PullConsumerOptions',
    defaults: DEFAULT_PULL_CONSUMER_OPTIONS,
  },
  {
    title: 'LitePullConsumer',
    file: 'src/client/consumer/lite/lite-pull-consumer-options.ts',
    iface: 'LitePullConsumerOptions',
    defaults: DEFAULT_LITE_PULL_CONSUMER_OPTIONS,
  },
  {
    title: 'AdminClient',
    file: 'src/client/admin/admin-client.ts',
    iface: 'AdminClientOptions',
    defaults: DEFAULT_ADMIN_CLIENT_OPTIONS,
  },
  { title: 'Broker', file: 'src/broker/broker-options.ts', iface: 'BrokerOptions', defaults: BROKER_DEFAULTS },
  {
    title: 'Broker store options',
    file: 'src/store/options.ts',
    iface: 'MessageStoreOptions',
    defaults: STORE_DEFAULTS,
    notOptions: ['storePath', 'clock', 'logger', 'storeHost'],
  },
];

/** How the page writes a default: the value in backticks, objects as JSON. */
const written = (v: unknown): string => `\`${typeof v === 'object' ? JSON.stringify(v) : String(v)}\``;

describe.each(sections)('$title', ({ title, file, iface, defaults, notOptions = [] }) => {
  const options = interfaceMembers(file, iface).filter((m) => !notOptions.includes(m.name));
  const rows = markdownTable(page, title);

  test('every option has a row, and every row is an option', () => {
    expect([...rows.keys()].filter((k) => k !== 'option').sort()).toEqual(options.map((m) => m.name).sort());
  });

  test('each default is the exported one; required options say so', () => {
    for (const m of options) {
      const cell = rows.get(m.name)?.[2] ?? '';
      if (m.name in defaults) expect(`${m.name}: ${cell}`).toBe(`${m.name}: ${written(defaults[m.name])}`);
      else if (!m.optional) expect(`${m.name}: ${cell}`).toBe(`${m.name}: required`);
      else expect(`${m.name}: ${cell}`).not.toBe(`${m.name}: `);
    }
  });

  test('every exported default belongs to a documented option', () => {
    const names = new Set(options.map((m) => m.name));
    expect(Object.keys(defaults).filter((k) => !names.has(k) && !notOptions.includes(k))).toEqual([]);
  });
});

test('every flag of `rocketmq-ts broker` is listed, and only those', () => {
  const cli = readFileSync(path.join(repoRoot, 'src/cli.ts'), 'utf8');
  const body = /async function runBroker[\s\S]*?options: \{([\s\S]*?)\n {4}\},/.exec(cli)?.[1] ?? '';
  const flags = [...body.matchAll(/^\s+'?([a-z][a-z-]*)'?: \{ type:/gm)].map((m) => `--${m[1]}`);
  expect(flags.length).toBeGreaterThan(10);
  const listed = [...markdownTable(page, 'Broker command line').keys()]
    .filter((k) => k !== 'flag')
    .map((k) => k.replace(/^-h, /, '').split(' ')[0]);
  expect(listed.sort()).toEqual(flags.sort());
});
