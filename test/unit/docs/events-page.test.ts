/**
 * docs/events.md stays true: each event map exported from `rocketmq-ts` has a section listing exactly
 * its events, and each row names the payload type the map gives.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { interfaceMembers, markdownTable, repoRoot } from '../../support/interface-members.js';

const page = readFileSync(path.join(repoRoot, 'docs/events.md'), 'utf8');

const maps = [
  { title: 'Producer', file: 'src/client/producer/producer-types.ts', iface: 'ProducerEvents' },
  { title: 'PushConsumer', file: 'src/client/consumer/push/push-consumer-events.ts', iface: 'PushConsumerEvents' },
  {
    title: 'LitePullConsumer',
    file: 'src/client/consumer/lite/lite-pull-core.ts',
    iface: 'LitePullConsumerEvents',
  },
];

/** The text of an entry point and of every module it re-exports whole (`export * from`). */
function entryText(file: string): string {
  const text = readFileSync(path.join(repoRoot, file), 'utf8');
  const whole = [...text.matchAll(/^export \* from '(\.[^']+)\.js';$/gm)].map((m) =>
    path.posix.join(path.posix.dirname(file), `${m[1] ?? ''}.ts`),
  );
  return [text, ...whole.map(entryText)].join('\n');
}

test('every event map the entry points export is documented', () => {
  const exported = ['src/index.ts', 'src/broker/index.ts']
    .map(entryText)
    .flatMap((text) => [...text.matchAll(/\b(\w+Events)\b/g)].map((m) => m[1]));
  expect([...new Set(exported)].sort()).toEqual(maps.map((m) => m.iface).sort());
});

describe.each(maps)('$title', ({ title, file, iface }) => {
  const events = interfaceMembers(file, iface);
  const rows = markdownTable(page, title);

  test('lists exactly its events', () => {
    expect([...rows.keys()].filter((k) => k !== 'event').sort()).toEqual(events.map((e) => e.name).sort());
  });

  test("each row names the event's payload type and says when it fires", () => {
    for (const e of events) {
      // `[event: RebalanceEvent]` → RebalanceEvent; `[err: unknown, info: {...}]` → `err:` and `info:`
      const single = /^\[\w+\??: (\w+)\]$/.exec(e.type)?.[1];
      const expected = single ? [single] : [...e.type.matchAll(/(?:^\[|, )(\w+\??:)/g)].map((m) => m[1] ?? '');
      const [, payload = '', when = ''] = rows.get(e.name) ?? [];
      expect({ event: e.name, missing: expected.filter((t) => !payload.includes(t)) }).toEqual({
        event: e.name,
        missing: [],
      });
      expect(when.length).toBeGreaterThan(20);
    }
  });
});
