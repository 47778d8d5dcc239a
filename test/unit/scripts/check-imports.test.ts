/**
 * scripts/check-imports.mjs, run on small temporary trees: each forbidden arrow and each circle
 * (type-only ones included) makes it exit non-zero with a line naming the file and what it imports.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../../support/interface-members.js';

const script = path.join(repoRoot, 'scripts/check-imports.mjs');
const trees: string[] = [];
afterEach(() => {
  for (const t of trees.splice(0)) rmSync(t, { recursive: true, force: true });
});

/** Writes `files` (path under the tree → source) into a new temp tree and runs the script on it. */
function check(files: Record<string, string>): { status: number | null; lines: string[] } {
  const tree = mkdtempSync(path.join(os.tmpdir(), 'check-imports-'));
  trees.push(tree);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(tree, file)), { recursive: true });
    writeFileSync(path.join(tree, file), text);
  }
  const r = spawnSync(process.execPath, [script, tree], { encoding: 'utf8' });
  return { status: r.status, lines: r.stderr.split('\n').filter((l) => l !== '') };
}

const allowed = {
  'src/remoting/remoting-client.ts': 'export interface RemotingClient { close(): Promise<void> }\n',
  'src/remoting/tcp-remoting-client.ts':
    "import type { RemotingClient } from './remoting-client.js';\nexport type T = RemotingClient;\n",
  'src/client/consumer/offset-store.ts': 'export const OFFSET_NOT_FOUND = -1;\n',
  'src/client/consumer/push/push-consumer.ts':
    "import { OFFSET_NOT_FOUND } from '../offset-store.js';\nexport const p = OFFSET_NOT_FOUND;\n",
  'src/client/telemetry/consumer-telemetry.ts':
    "import type { R } from '../instance/mq-client-instance.js';\nexport type C = R;\n",
  'src/client/consumer/push/consume-core.ts':
    "import type { C } from '../../telemetry/consumer-telemetry.js';\nexport type K = C;\n",
  'src/client/instance/mq-client-instance.ts':
    "import type { RemotingClient } from '../../remoting/remoting-client.js';\nexport type R = RemotingClient;\n",
};

test('a tree within the rules passes', () => {
  expect(check(allowed)).toEqual({ status: 0, lines: [] });
});

test.each([
  [
    'a type-only circle',
    {
      'src/common/a.ts': "import type { B } from './b.js';\nexport interface A { b?: B }\n",
      'src/common/b.ts': "import type { A } from './a.js';\nexport interface B { a?: A }\n",
    },
    'import cycle: src/common/a.ts -> src/common/b.ts -> src/common/a.ts',
  ],
  [
    'the lite consumer importing the push consumer',
    { 'src/client/consumer/lite/lite.ts': "import { p } from '../push/push-consumer.js';\nexport const l = p;\n" },
    'src/client/consumer/lite/lite.ts: the lite consumer must not import the push consumer: imports src/client/consumer/push/push-consumer.ts',
  ],
  [
    'the shared consumer room importing the push consumer (type-only)',
    {
      'src/client/consumer/routes.ts': "import type { p } from './push/push-consumer.js';\nexport type R = typeof p;\n",
    },
    'src/client/consumer/routes.ts: the shared consumer room must not import the push consumer: imports src/client/consumer/push/push-consumer.ts',
  ],
  [
    'a consumer importing the producer',
    {
      'src/client/producer/producer.ts': 'export const x = 1;\n',
      'src/client/consumer/pull/pull.ts': "import { x } from '../../producer/producer.js';\nexport const y = x;\n",
    },
    'src/client/consumer/pull/pull.ts: a consumer must not import the producer or the admin client: imports src/client/producer/producer.ts',
  ],
  [
    'the message trace importing the producer',
    {
      'src/client/producer/producer.ts': 'export const x = 1;\n',
      'src/client/trace/hooks.ts': "import { x } from '../producer/producer.js';\nexport const y = x;\n",
    },
    'src/client/trace/hooks.ts: the message trace imports only the client instance among the client rooms: imports src/client/producer/producer.ts',
  ],
  [
    'the client instance importing the message trace',
    {
      'src/client/instance/x.ts': "import { t } from '../trace/hooks.js';\nexport const x = t;\n",
      'src/client/trace/hooks.ts': 'export const t = 1;\n',
    },
    'src/client/instance/x.ts: the client instance must not import a client (it drives them through MQConsumerInner/MQProducerInner): imports src/client/trace/hooks.ts',
  ],
  [
    'the client instance importing a consumer',
    { 'src/client/instance/x.ts': "import { p } from '../consumer/push/push-consumer.js';\nexport const x = p;\n" },
    'src/client/instance/x.ts: the client instance must not import a client (it drives them through MQConsumerInner/MQProducerInner): imports src/client/consumer/push/push-consumer.ts',
  ],
  [
    'telemetry importing a consumer',
    { 'src/client/telemetry/x.ts': "import { p } from '../consumer/push/push-consumer.js';\nexport const x = p;\n" },
    'src/client/telemetry/x.ts: telemetry must not import a client (the clients call it): imports src/client/consumer/push/push-consumer.ts',
  ],
  [
    'the client importing a concrete transport',
    {
      'src/client/instance/t.ts':
        "import type { T } from '../../remoting/tcp-remoting-client.js';\nexport type X = T;\n",
    },
    'src/client/instance/t.ts: the client may import from src/remoting only remoting-client.ts, remoting-errors.ts, transport-factory.ts: imports src/remoting/tcp-remoting-client.ts',
  ],
])('%s fails, naming it', (_name, extra, line) => {
  const r = check({ ...allowed, ...extra });
  expect(r.status).toBe(1);
  expect(r.lines).toEqual([line]);
});
