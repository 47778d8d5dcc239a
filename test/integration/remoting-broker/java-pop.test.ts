/**
 * RocketMQ 5.3.3's Java remoting client consuming with POP from the bundled broker (its remoting port used
 * as name server and broker at once): the kit's `Pop` example (MQClientAPIImpl.popMessageAsync and
 * ackMessageAsync, queue id -1) and its push consumer with client rebalance off on a group that
 * `mqadmin setConsumeMode -m POP` switched to POP (QUERY_ASSIGNMENT, then POP_MESSAGE instead of
 * PULL_MESSAGE). Each gets every message of its tag exactly as sent. One broker for the file; skipped with
 * one line without the 5.3.3 kit or a JDK.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Broker } from '../../../src/broker/index.js';
import { Producer } from '../../../src/client/producer/producer.js';
import { tempStorePath } from '../../support/broker-fixture.js';
import { compileJava, describeWithJava, javaKit, type JavaKit } from '../../support/java-client.js';

let seq = 0;
const uniq = (prefix: string): string => `${prefix}_${process.pid}_${Date.now().toString(36)}_${++seq}`;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describeWithJava(
  'RocketMQ 5.3.3 Java POP consumers against the bundled broker (remoting)',
  () => {
    let kit: JavaKit;
    let classes: string;
    let clientDir: string;
    let storePath: string;
    let broker: Broker;
    let producer: Producer;
    let ns: string;

    /** Runs a kit script with the client's temp dir; never rejects. */
    const run = (script: string, args: string[], timeoutMs = 120_000): Promise<Run> =>
      new Promise((resolve) => {
        execFile(
          path.join(kit.dir, 'bin', script),
          args,
          {
            env: { ...process.env, RMQ_CLIENT_DIR: clientDir, RMQ_NAMESRV_ADDR: ns },
            cwd: clientDir,
            timeout: timeoutMs,
            maxBuffer: 16 * 1024 * 1024,
          },
          (err, stdout, stderr) =>
            resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
        );
      });

    /** The bodies of the `topic=...` lines a kit example printed. */
    const bodiesOf = (out: string, topic: string): string[] =>
      out
        .split('\n')
        .filter((l) => l.startsWith(`topic=${topic} `))
        .map((l) => / body=(\S+)/.exec(l)![1]!);

    const sendTagged = async (topic: string, n: number): Promise<string[]> => {
      const want: string[] = [];
      for (let i = 0; i < n; i++) {
        const tag = i % 3 === 2 ? 'TagB' : 'TagA';
        await producer.send({ topic, body: Buffer.from(`${topic}-${i}`), tags: tag });
        if (tag === 'TagA') want.push(`${topic}-${i}`);
      }
      return want.sort();
    };

    beforeAll(async () => {
      const found = javaKit(5);
      if (!found) return;
      kit = found;
      const examples = path.join(kit.dir, 'examples');
      classes = compileJava(
        kit,
        readdirSync(examples)
          .filter((f) => f.endsWith('.java'))
          .map((f) => path.join(examples, f)),
      );
      clientDir = mkdtempSync(path.join(os.tmpdir(), 'rmq5-java-pop-'));
      storePath = tempStorePath('rmq-java-pop-');
      broker = await Broker.start({ storePath, port: 0, remotingPort: 0 });
      ns = broker.remotingAddress as string;
      producer = new Producer({ namesrvAddr: ns, defaultTopicQueueNums: 4 });
      await producer.start();
    }, 120_000);

    afterAll(async () => {
      await producer?.shutdown();
      await broker?.shutdown();
      for (const dir of [storePath, classes, clientDir]) if (dir) rmSync(dir, { recursive: true, force: true });
    }, 60_000);

    it("the kit's Pop (POP_MESSAGE + ACK_MESSAGE) gets every TagA message once", async () => {
      const topic = uniq('JPopT');
      const want = await sendTagged(topic, 24);
      const r = await run('java-client', [
        '-cp',
        classes,
        'Pop',
        ns,
        topic,
        uniq('JPopG'),
        String(want.length),
        'TagA',
        '90',
      ]);
      const got = bodiesOf(r.stdout, topic);
      expect({ code: r.code, got: [...new Set(got)].sort(), stderr: r.stderr.slice(-2000) }).toEqual({
        code: 0,
        got: want,
        stderr: r.stderr.slice(-2000),
      });
      // Every one was acknowledged: none came twice within the run's 60 s invisible time.
      expect(got).toHaveLength(want.length);
    }, 150_000);

    it('a push consumer with client rebalance off on a group set to POP by mqadmin setConsumeMode gets every message', async () => {
      const topic = uniq('JPopPushT');
      const group = uniq('JPopPushG');
      const want = await sendTagged(topic, 24);
      const mode = await run('mqadmin', [
        'setConsumeMode',
        '-n',
        ns,
        '-b',
        ns,
        '-t',
        topic,
        '-g',
        group,
        '-m',
        'POP',
        '-q',
        '4',
      ]);
      expect({ out: mode.stdout, err: mode.stderr.slice(-1500) }).toEqual({
        out: expect.stringMatching(/set consume mode to \S+ success/) as unknown as string,
        err: mode.stderr.slice(-1500),
      });
      const r = await run('java-client', [
        '-Dconsumer.pop=true',
        '-cp',
        classes,
        'Consumer',
        ns,
        topic,
        group,
        'tag',
        'TagA',
        String(want.length),
        '90',
      ]);
      const got = bodiesOf(r.stdout, topic);
      expect({ code: r.code, got: [...new Set(got)].sort(), stderr: r.stderr.slice(-2000) }).toEqual({
        code: 0,
        got: want,
        stderr: r.stderr.slice(-2000),
      });
    }, 200_000);
  },
  5,
);
