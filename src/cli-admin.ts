/**
 * The admin commands of the `rocketmq-ts` CLI, with RocketMQ `mqadmin`'s names and flags, over an
 * AdminClient. Each prints a readable table, or one JSON document with `--json`; a failure prints the
 * reason on stderr (with `--json`: `{ "error": { "code", "message" } }` on stdout, see cli.ts) and exits 1
 * (2 for a usage error).
 */
import { parseArgs } from 'node:util';
import { AdminClient } from './client/admin/admin-client.js';
import type { MessageExt } from './common/message.js';
import type { MsgTraceView } from './client/admin/admin-trace.js';

export class UsageError extends Error {}

interface Out {
  json: boolean;
  write(text: string): void;
}

const COMMON = {
  endpoints: { type: 'string' },
  namesrvAddr: { type: 'string', short: 'n' },
  'access-token': { type: 'string' },
  'access-key': { type: 'string' },
  'secret-key': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The admin commands, with their flags and one line of help. */
export const ADMIN_COMMANDS = {
  topicList: { help: 'list every topic', flags: {} },
  updateTopic: {
    help: 'create or update a topic: -t TOPIC [-r READ_QUEUES] [-w WRITE_QUEUES] [-p PERM] [-o true|false]',
    flags: {
      topic: { type: 'string', short: 't' },
      readQueueNums: { type: 'string', short: 'r' },
      writeQueueNums: { type: 'string', short: 'w' },
      perm: { type: 'string', short: 'p' },
      order: { type: 'string', short: 'o' },
    },
  },
  deleteTopic: { help: 'delete a topic: -t TOPIC', flags: { topic: { type: 'string', short: 't' } } },
  topicStatus: {
    help: 'min/max offset and last store time per queue: -t TOPIC',
    flags: { topic: { type: 'string', short: 't' } },
  },
  consumerProgress: {
    help: "a group's offsets and lag per queue, with totals: -g GROUP [-t TOPIC]",
    flags: { group: { type: 'string', short: 'g' }, topic: { type: 'string', short: 't' } },
  },
  consumerConnection: {
    help: "a group's members and subscriptions: -g GROUP",
    flags: { group: { type: 'string', short: 'g' } },
  },
  queryMsgById: {
    help: 'a message by id: -i MSG_ID [-t TOPIC, needed for a client message id]',
    flags: { msgId: { type: 'string', short: 'i' }, topic: { type: 'string', short: 't' } },
  },
  queryMsgByKey: {
    help: 'messages by key: -t TOPIC -k KEY [-c MAX] [-b BEGIN_MS] [-e END_MS]',
    flags: {
      topic: { type: 'string', short: 't' },
      key: { type: 'string', short: 'k' },
      maxNum: { type: 'string', short: 'c' },
      beginTimestamp: { type: 'string', short: 'b' },
      endTimestamp: { type: 'string', short: 'e' },
    },
  },
  queryMsgTraceById: {
    help: 'the trace of a message (its Pub and Sub rows): -i MSG_ID [-t TRACE_TOPIC, default RMQ_SYS_TRACE_TOPIC]',
    flags: { msgId: { type: 'string', short: 'i' }, traceTopic: { type: 'string', short: 't' } },
  },
  resetOffsetByTime: {
    help: "move a group's offsets to a time: -g GROUP -t TOPIC -s TIME (ms, 'now', ISO date or yyyy-MM-dd#HH:mm:ss:SSS) [-f true|false]",
    flags: {
      group: { type: 'string', short: 'g' },
      topic: { type: 'string', short: 't' },
      timestamp: { type: 'string', short: 's' },
      force: { type: 'string', short: 'f' },
    },
  },
} as const;

export type AdminCommandName = keyof typeof ADMIN_COMMANDS;

export function isAdminCommand(name: string): name is AdminCommandName {
  return Object.hasOwn(ADMIN_COMMANDS, name);
}

export function adminUsage(): string {
  const lines = Object.entries(ADMIN_COMMANDS).map(([name, c]) => `  ${name.padEnd(20)}${c.help}`);
  return `Admin commands (RocketMQ mqadmin names and flags):
${lines.join('\n')}
Every admin command takes --endpoints URL[,URL] (default $ROCKETMQ_TS_ENDPOINTS or http://127.0.0.1:8081)
or -n HOST:PORT[;HOST:PORT] (--namesrvAddr: the NameServers of a RocketMQ cluster, or the bundled broker's
remoting port), --access-token T (or $ROCKETMQ_TS_ACCESS_TOKEN; --endpoints only), --access-key AK and
--secret-key SK (or $ROCKETMQ_ACCESS_KEY and $ROCKETMQ_SECRET_KEY: the account of a cluster with ACL turned
on; admin changes need an admin account) and --json (one JSON document instead of a table).
`;
}

/**
 * The ACL account of an admin command: the flags, else the environment (ROCKETMQ_ACCESS_KEY,
 * ROCKETMQ_SECRET_KEY); both halves or neither. A secret key on the command line can be read by every
 * user of the machine in the process list, so it earns a warning on `warn`.
 */
export function cliCredentials(
  flags: { 'access-key'?: string | undefined; 'secret-key'?: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
  warn: (text: string) => void,
): { accessKey: string; secretKey: string } | undefined {
  const accessKey = flags['access-key'] ?? env.ROCKETMQ_ACCESS_KEY ?? '';
  const secretKey = flags['secret-key'] ?? env.ROCKETMQ_SECRET_KEY ?? '';
  if (accessKey === '' && secretKey === '') return undefined;
  if (accessKey === '') throw new UsageError('a secret key was given without --access-key (or $ROCKETMQ_ACCESS_KEY)');
  if (secretKey === '') throw new UsageError('--access-key needs --secret-key (or $ROCKETMQ_SECRET_KEY)');
  if (flags['secret-key'] !== undefined)
    warn('rocketmq-ts: warning: --secret-key is visible to every user in the process list; use ROCKETMQ_SECRET_KEY\n');
  return { accessKey, secretKey };
}

/** Lines of a table: a header row, then the rows, columns padded to their widest cell. */
export function formatTable(headers: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | number>>): string {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return (
    cells
      .map((r) =>
        r
          .map((c, i) => (c ?? '').padEnd(widths[i] ?? 0))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

const time = (ms: number): string => (ms > 0 ? new Date(ms).toISOString() : '-');

function required(flag: string, v: string | undefined): string {
  if (v === undefined || v === '') throw new UsageError(`-${flag} is required`);
  return v;
}

function intFlag(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v) || !Number.isSafeInteger(Number(v)))
    throw new UsageError(`-${flag} must be a whole number, got '${v}'`);
  return Number(v);
}

function boolFlag(flag: string, v: string | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  if (v !== 'true' && v !== 'false') throw new UsageError(`-${flag} must be true or false, got '${v}'`);
  return v === 'true';
}

/** mqadmin's time forms: ms since the epoch, `now`, `yyyy-MM-dd#HH:mm:ss:SSS` (local time), or an ISO date. */
export function parseTimestamp(v: string): number {
  if (/^-?\d+$/.test(v)) return Number(v);
  if (v === 'now') return Date.now();
  const m = /^(\d{4})-(\d{2})-(\d{2})#(\d{2}):(\d{2}):(\d{2}):(\d{3})$/.exec(v);
  if (m) {
    const [, y, mo, d, h, mi, s, ms] = m.map(Number) as [
      number,
      number,
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    return new Date(y, mo - 1, d, h, mi, s, ms).getTime();
  }
  const t = Date.parse(v);
  if (Number.isNaN(t))
    throw new UsageError(`-s must be ms since the epoch, 'now', yyyy-MM-dd#HH:mm:ss:SSS or an ISO date, got '${v}'`);
  return t;
}

function messageJson(m: MessageExt): Record<string, unknown> {
  return {
    msgId: m.msgId,
    offsetMsgId: m.offsetMsgId,
    topic: m.topic,
    queueId: m.queueId,
    queueOffset: m.queueOffset,
    commitLogOffset: m.commitLogOffset,
    tags: m.properties?.TAGS,
    keys: m.properties?.KEYS,
    properties: m.properties,
    bornTimestamp: m.bornTimestamp,
    storeTimestamp: m.storeTimestamp,
    reconsumeTimes: m.reconsumeTimes,
    bodyLength: m.body?.length ?? 0,
    body: m.body ? m.body.toString('utf8') : null,
  };
}

function printMessages(out: Out, msgs: MessageExt[]): void {
  if (out.json) {
    out.write(JSON.stringify({ messages: msgs.map(messageJson) }, null, 2) + '\n');
    return;
  }
  out.write(
    formatTable(
      ['#MessageId', '#Topic', '#QID', '#Offset', '#Tags', '#Keys', '#StoreTime', '#Body'],
      msgs.map((m) => [
        m.msgId,
        m.topic,
        m.queueId,
        m.queueOffset,
        m.properties?.TAGS ?? '',
        m.properties?.KEYS ?? '',
        time(m.storeTimestamp),
        (m.body ? m.body.toString('utf8') : '').slice(0, 60).replace(/\s+/g, ' '),
      ]),
    ),
  );
}

/** Java's `%-Ns`. */
const col = (v: string | number, n: number): string => String(v).padEnd(n);

/** `yyyy-MM-dd HH:mm:ss` in local time, as mqadmin's DateFormatUtils prints it. */
function localTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

function traceRow(cells: readonly (string | number)[]): string {
  const widths = [10, 20, 20, 20, 10, 10];
  return cells.map((c, i) => col(c, widths[i] ?? 0)).join(' ') + '\n';
}

/**
 * mqadmin queryMsgTraceById's layout: each Pub row under its own header, then per consumer group a
 * header and its SubAfter rows (printed as `Sub`).
 */
export function formatMsgTrace(views: readonly MsgTraceView[]): string {
  let text = '';
  const byGroup = new Map<string, MsgTraceView[]>();
  for (const v of views) {
    if (v.type === 'Pub') {
      text += traceRow(['#Type', '#ProducerGroup', '#ClientHost', '#SendTime', '#CostTimes', '#Status']);
      text += traceRow(['Pub', v.groupName, v.clientHost, localTime(v.timeStamp), `${v.costTime}ms`, v.status]);
      text += '\n';
    }
    if (v.type === 'SubAfter') {
      const list = byGroup.get(v.groupName) ?? [];
      list.push(v);
      byGroup.set(v.groupName, list);
    }
  }
  for (const list of byGroup.values()) {
    text += traceRow(['#Type', '#ConsumerGroup', '#ClientHost', '#ConsumerTime', '#CostTimes', '#Status']);
    for (const v of list)
      text += traceRow(['Sub', v.groupName, v.clientHost, localTime(v.timeStamp), `${v.costTime}ms`, v.status]);
    text += '\n';
  }
  return text;
}

async function run(
  name: AdminCommandName,
  v: Record<string, string | boolean | undefined>,
  admin: AdminClient,
  out: Out,
): Promise<void> {
  const s = (k: string): string | undefined => (typeof v[k] === 'string' ? v[k] : undefined);
  switch (name) {
    case 'topicList': {
      const topics = await admin.topicList();
      out.write(out.json ? JSON.stringify({ topicList: topics }, null, 2) + '\n' : topics.join('\n') + '\n');
      return;
    }
    case 'updateTopic': {
      const topic = required('t', s('topic'));
      const read = intFlag('r', s('readQueueNums')) ?? 8;
      const write = intFlag('w', s('writeQueueNums')) ?? 8;
      const perm = intFlag('p', s('perm')) ?? 6;
      const order = boolFlag('o', s('order')) ?? false;
      await admin.createTopic(topic, { readQueueNums: read, writeQueueNums: write, perm, order });
      const cfg = { topicName: topic, readQueueNums: read, writeQueueNums: write, perm, order };
      out.write(
        out.json
          ? JSON.stringify({ ok: true, topicConfig: cfg }) + '\n'
          : `create topic to ${(await admin.brokerAddresses()).join(',')} success.\n${JSON.stringify(cfg)}\n`,
      );
      return;
    }
    case 'deleteTopic': {
      const topic = required('t', s('topic'));
      await admin.deleteTopic(topic);
      out.write(
        out.json
          ? JSON.stringify({ ok: true, topic }) + '\n'
          : `delete topic [${topic}] from ${(await admin.brokerAddresses()).join(',')} success.\n`,
      );
      return;
    }
    case 'topicStatus': {
      const rows = await admin.topicStatus(required('t', s('topic')));
      if (out.json) {
        out.write(JSON.stringify({ queues: rows }, null, 2) + '\n');
        return;
      }
      out.write(
        formatTable(
          ['#Broker Name', '#QID', '#Min Offset', '#Max Offset', '#Last Updated'],
          rows.map((r) => [r.mq.brokerName, r.mq.queueId, r.minOffset, r.maxOffset, time(r.lastUpdateTimestamp)]),
        ),
      );
      return;
    }
    case 'consumerProgress': {
      const p = await admin.consumerProgress(required('g', s('group')), s('topic'));
      if (out.json) {
        out.write(JSON.stringify(p, null, 2) + '\n');
        return;
      }
      out.write(
        formatTable(
          ['#Topic', '#Broker Name', '#QID', '#Broker Offset', '#Consumer Offset', '#Diff', '#LastTime'],
          p.queues.map((q) => [
            q.mq.topic,
            q.mq.brokerName,
            q.mq.queueId,
            q.brokerOffset,
            q.consumerOffset,
            q.lag,
            time(q.lastTimestamp),
          ]),
        ),
      );
      out.write(`\nConsume TPS: ${p.consumeTps.toFixed(2)}\nConsume Diff Total: ${p.diffTotal}\n`);
      return;
    }
    case 'consumerConnection': {
      const c = await admin.consumerConnection(required('g', s('group')));
      if (out.json) {
        out.write(JSON.stringify(c, null, 2) + '\n');
        return;
      }
      out.write(
        formatTable(
          ['#ClientId', '#ClientAddr', '#Language', '#Version'],
          c.connections.map((x, i) => [
            `${String(i + 1).padStart(3, '0')} ${x.clientId}`,
            x.clientAddr,
            x.language,
            x.version,
          ]),
        ),
      );
      out.write('\nBelow is subscription:\n');
      out.write(
        formatTable(
          ['#Topic', '#SubExpression', '#Type'],
          c.subscriptions.map((x) => [x.topic, x.subString, x.expressionType]),
        ),
      );
      out.write(
        `\nConsumeType: ${c.consumeType ?? '-'}\nMessageModel: ${c.messageModel ?? '-'}\nConsumeFromWhere: ${c.consumeFromWhere ?? '-'}\n`,
      );
      return;
    }
    case 'queryMsgById':
      printMessages(out, [await admin.queryMsgById(required('i', s('msgId')), s('topic'))]);
      return;
    case 'queryMsgByKey': {
      const msgs = await admin.queryMsgByKey(required('t', s('topic')), required('k', s('key')), {
        maxNum: intFlag('c', s('maxNum')) ?? 32,
        beginTimestamp: s('beginTimestamp') === undefined ? 0 : parseTimestamp(s('beginTimestamp') ?? ''),
        endTimestamp:
          s('endTimestamp') === undefined ? Number.MAX_SAFE_INTEGER : parseTimestamp(s('endTimestamp') ?? ''),
      });
      printMessages(out, msgs);
      return;
    }
    case 'queryMsgTraceById': {
      const traceTopic = s('traceTopic');
      const views = await admin.queryMsgTraceById(required('i', s('msgId')), traceTopic ? { traceTopic } : {});
      out.write(out.json ? JSON.stringify({ traces: views }, null, 2) + '\n' : formatMsgTrace(views));
      return;
    }
    case 'resetOffsetByTime': {
      const group = required('g', s('group'));
      const topic = required('t', s('topic'));
      const timestamp = parseTimestamp(required('s', s('timestamp')));
      const rows = await admin.resetOffsetByTime(group, topic, timestamp, boolFlag('f', s('force')) ?? true);
      if (out.json) {
        out.write(JSON.stringify({ group, topic, timestamp, queues: rows }, null, 2) + '\n');
        return;
      }
      out.write(
        `rollback consumer offset by specified group[${group}], topic[${topic}], timestamp(string)[${new Date(timestamp).toISOString()}], timestamp(long)[${timestamp}]\n`,
      );
      out.write(
        formatTable(
          ['#brokerName', '#queueId', '#offset'],
          rows.map((r) => [r.mq.brokerName, r.mq.queueId, r.offset]),
        ),
      );
      return;
    }
  }
}

/** Runs one admin command; resolves with the process exit code. */
export async function runAdminCommand(name: AdminCommandName, args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { ...COMMON, ...ADMIN_COMMANDS[name].flags },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(`rocketmq-ts ${name}: ${ADMIN_COMMANDS[name].help}\n\n${adminUsage()}`);
    return 0;
  }
  if (values.namesrvAddr !== undefined && values.endpoints !== undefined)
    throw new UsageError('give either --endpoints (the bundled broker over HTTP) or -n (NameServers), not both');
  const list = (v: string): string[] =>
    v
      .split(/[,;]/)
      .map((e) => e.trim())
      .filter((e) => e !== '');
  const accessToken = values['access-token'] ?? process.env.ROCKETMQ_TS_ACCESS_TOKEN ?? undefined;
  const credentials = cliCredentials(values, process.env, (t) => process.stderr.write(t));
  const signed = credentials ? { credentials } : {};
  const admin =
    values.namesrvAddr !== undefined
      ? new AdminClient({
          namesrvAddr: list(values.namesrvAddr),
          ...(values['access-token'] ? { accessToken } : {}),
          ...signed,
        })
      : new AdminClient({
          endpoints: list(values.endpoints ?? process.env.ROCKETMQ_TS_ENDPOINTS ?? 'http://127.0.0.1:8081'),
          ...(accessToken ? { accessToken } : {}),
          ...signed,
        });
  try {
    await run(name, values as Record<string, string | boolean | undefined>, admin, {
      json: values.json === true,
      write: (t) => process.stdout.write(t),
    });
    return 0;
  } finally {
    await admin.shutdown();
  }
}
