/**
 * Fuzzed requests for every command of the broker's HTTP wire: plain JS so that both the jest suite (on
 * the sources) and the soak scripts (on dist/) use it. The caller passes the protocol module (COMMANDS,
 * encodeFrame, messageProperties2String-free: bodies are built here) and a seeded random source.
 *
 * A request is `{ path, method, headers, body, command }`. Kinds, by weight: a well-typed header with
 * plausible values (processors run and reach their checks), a header with one field mutated, a header of
 * random shape, a garbage frame, an odd path or method.
 */

import { Buffer } from 'node:buffer';

/** Mulberry32: a small seeded PRNG, so a failing run can be repeated with its seed. */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The kind of a zod field: string, number, boolean or other (optional/default unwrapped). */
function kindOf(schema) {
  let s = schema;
  for (let i = 0; i < 5 && s; i++) {
    const def = s._zod?.def ?? s.def;
    if (!def) return 'other';
    if (def.type === 'optional' || def.type === 'default' || def.type === 'nullable') {
      s = def.innerType;
      continue;
    }
    if (def.type === 'string') return 'string';
    if (def.type === 'number' || def.type === 'int') return 'number';
    if (def.type === 'boolean') return 'boolean';
    return 'other';
  }
  return 'other';
}

/** The commands as the generator needs them: name, code, header fields with kinds, JSON body or not. */
export function describeCommands(COMMANDS) {
  return [...COMMANDS.values()].map((spec) => {
    const shape = spec.requestHeader.shape ?? spec.requestHeader._zod?.def?.shape ?? {};
    return {
      name: spec.name,
      code: spec.code,
      fields: Object.entries(shape).map(([name, schema]) => ({ name, kind: kindOf(schema) })),
      jsonBody: spec.requestBody !== undefined,
    };
  });
}

export function createFuzzer({ commands, encodeFrame, random, topics, groups }) {
  const pick = (xs) => xs[Math.floor(random() * xs.length)];
  const int = (n) => Math.floor(random() * n);
  const weirdStrings = [
    '',
    ' ',
    '../../etc/passwd',
    'a/b',
    'TBW102',
    'SCHEDULE_TOPIC_XXXX',
    '%RETRY%',
    '%DLQ%x',
    'x'.repeat(128),
    'y'.repeat(300),
    '\u0000',
    'é✓😀',
    '*',
    '||',
    'a || b',
    'TagA || TagB',
    "a > 1 AND b = 'x'",
    '((((((((((a=1))))))))))',
    'NOT NOT NOT',
    '1e999',
    '-1',
    'true',
    '\u0001k\u0002v\u0001',
    'UNIQ_KEY\u0001v\u0002DELAY\u000199\u0002',
  ];
  const weirdNumbers = [
    0,
    -1,
    1,
    2,
    7,
    31,
    32,
    1024,
    1025,
    65535,
    2 ** 31 - 1,
    2 ** 31,
    -(2 ** 31) - 1,
    2 ** 53 - 1,
    1e9,
    1e21,
    0.5,
    -0.0,
  ];
  const anyValue = () => {
    switch (int(8)) {
      case 0:
        return pick(weirdStrings);
      case 1:
        return pick(weirdNumbers);
      case 2:
        return random() < 0.5;
      case 3:
        return null;
      case 4:
        return [pick(weirdNumbers), pick(weirdStrings)];
      case 5:
        return { nested: pick(weirdStrings), n: pick(weirdNumbers) };
      case 6:
        return pick(topics);
      default:
        return String(pick(weirdNumbers));
    }
  };
  const goodValue = (field) => {
    const n = field.name.toLowerCase();
    if (field.kind === 'boolean') return random() < 0.5;
    if (field.kind === 'number') {
      if (n.includes('queueid')) return int(10) - 1;
      if (n.includes('timeout') || n.includes('millis')) return pick([0, 1, 10, 50, 200]);
      if (n.includes('sysflag')) return pick([0, 1, 2, 3, 4, 6, 7, 8, 15, 0x100, 0x201, 0xffff]);
      if (n.includes('offset')) return pick([0, 1, 5, 100, 1e6, -1]);
      if (n.includes('num') || n.includes('max')) return pick([0, 1, 4, 8, 32, 1000]);
      if (n.includes('perm')) return pick([0, 2, 4, 6, 7]);
      if (n.includes('level')) return pick([-1, 0, 1, 3, 18, 19]);
      return pick(weirdNumbers);
    }
    if (field.kind === 'string') {
      if (n.includes('group')) return pick(groups);
      if (n === 'topic' || n.includes('topic')) return pick(topics);
      if (n.includes('subscription') || n.includes('expression'))
        return pick(['*', 'TagA', 'TagA || TagB', 'a > 1', 'SQL92', 'TAG', '((', '']);
      if (n.includes('properties'))
        return pick(['', 'TAGS\u0001TagA\u0002', 'KEYS\u0001k\u0002DELAY\u00012\u0002', '\u0001\u0002\u0001']);
      if (n.includes('clientid')) return `client-${int(50)}`;
      return pick(weirdStrings);
    }
    return anyValue();
  };
  const jsonBody = (command) => {
    if (random() < 0.3) return anyValue();
    const group = pick(groups);
    switch (command) {
      case 'HEART_BEAT':
        return {
          clientID: `client-${int(50)}`,
          consumerDataSet: Array.from({ length: int(3) }, () => ({
            groupName: random() < 0.8 ? group : anyValue(),
            consumeType: pick(['CONSUME_PASSIVELY', 'CONSUME_ACTIVELY', 'X']),
            messageModel: pick(['CLUSTERING', 'BROADCASTING']),
            consumeFromWhere: pick(['CONSUME_FROM_LAST_OFFSET', 'CONSUME_FROM_FIRST_OFFSET']),
            subscriptionDataSet: Array.from({ length: int(3) }, () => ({
              topic: pick(topics),
              subString: pick(['*', 'TagA', 'a > 1', '((']),
              tagsSet: [],
              codeSet: [],
              subVersion: int(1000),
              expressionType: pick(['TAG', 'SQL92', 'X']),
              classFilterMode: false,
            })),
            unitMode: false,
          })),
          producerDataSet: random() < 0.5 ? [{ groupName: group }] : [],
        };
      case 'UPDATE_AND_CREATE_SUBSCRIPTIONGROUP':
        return {
          groupName: random() < 0.8 ? group : anyValue(),
          retryQueueNums: pick(weirdNumbers),
          retryMaxTimes: pick(weirdNumbers),
        };
      default:
        return { any: anyValue(), topic: pick(topics), group };
    }
  };
  const binaryBody = (command) => {
    const r = random();
    if (r < 0.4) return Buffer.from(`body-${int(1e6)}`);
    if (r < 0.5) return Buffer.alloc(0);
    if (r < 0.7 && command === 'SEND_BATCH_MESSAGE') {
      // A batch element: [int total][int magic][int crc][int flag][int bodyLen][body][short propsLen][props]
      const b = Buffer.alloc(4 + 4 + 4 + 4 + 4 + 3 + 2);
      b.writeInt32BE(random() < 0.7 ? b.length : int(1e6) - 5, 0);
      b.writeInt32BE(random() < 0.5 ? 3 : -1, 16);
      b.write('abc', 20);
      return Buffer.concat([b, b]);
    }
    const junk = Buffer.alloc(int(300));
    for (let i = 0; i < junk.length; i++) junk[i] = int(256);
    return junk;
  };
  const frame = (header, body) => encodeFrame(header, body);
  const post = (command, body) => ({
    path: `/v1/${random() < 0.8 ? command.name : command.code}`,
    method: 'POST',
    body,
    command: command.name,
  });

  /** One fuzzed request. */
  return function next() {
    const command = pick(commands);
    const r = random();
    const header = {};
    if (r < 0.75) {
      for (const f of command.fields) if (random() < 0.95) header[f.name] = goodValue(f);
      if (r > 0.45 && command.fields.length > 0) header[pick(command.fields).name] = anyValue();
    } else if (r < 0.85) {
      for (let i = int(6); i > 0; i--)
        header[pick([...command.fields.map((f) => f.name), 'extra', '__proto__', 'constructor'])] = anyValue();
    } else if (r < 0.93) {
      const junk = Buffer.alloc(int(64));
      for (let i = 0; i < junk.length; i++) junk[i] = int(256);
      return { ...post(command, junk), command: `${command.name} (garbage frame)` };
    } else {
      const odd = pick([
        { path: `/v1/${int(1e9)}`, method: 'POST' },
        { path: '/v1/', method: 'POST' },
        { path: `/v2/${command.name}`, method: 'POST' },
        { path: `/v1/${command.name}?x=1`, method: 'POST' },
        { path: `/v1/${command.name}`, method: 'GET' },
        { path: `/${'a'.repeat(200)}`, method: 'PUT' },
      ]);
      return {
        ...odd,
        body: odd.method === 'GET' ? undefined : frame({}, undefined),
        command: `(odd path ${odd.method})`,
      };
    }
    const body = command.jsonBody
      ? Buffer.from(JSON.stringify(jsonBody(command.name)) ?? 'null')
      : random() < 0.6
        ? binaryBody(command.name)
        : undefined;
    return post(command, frame(header, body));
  };
}
