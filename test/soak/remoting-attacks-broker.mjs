#!/usr/bin/env node
// The broker of remoting-attacks.soak.mjs, in a process of its own so that its RSS is not mixed with the
// attackers' memory: starts a broker from dist/ with its default limits (127.0.0.1, ports 0, a temp store)
// and answers the soak's questions over IPC (`{id, op, arg}` → `{id, result}`). Run with --expose-gc.
import { Buffer } from 'node:buffer';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Broker } from '../../dist/broker/index.js';

const storePath = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-remoting-soak-'));
const broker = await Broker.start({ storePath, port: 0, remotingPort: 0 });

/** Acknowledged messages (`{msgId, body}`) that the store does not hold with their body. */
async function missing(acked) {
  let n = 0;
  for (const { msgId, body } of acked) {
    const m = await broker.store.lookMessageByMsgId(msgId).catch(() => null);
    if (!m || Buffer.from(m.body).toString() !== body) n++;
  }
  return n;
}

process.on('message', async ({ id, op, arg }) => {
  let result = null;
  if (op === 'stats') result = broker.remotingStats();
  else if (op === 'mem') result = process.memoryUsage();
  else if (op === 'gc') {
    globalThis.gc();
    result = process.memoryUsage();
  } else if (op === 'missing') result = await missing(arg);
  else if (op === 'maxOffset') result = broker.store.getMaxOffsetInQueue(arg, 0);
  else if (op === 'shutdown') {
    await broker.shutdown();
    fs.rmSync(storePath, { recursive: true, force: true });
    process.send({ id, result }, () => process.exit(0));
    return;
  }
  process.send({ id, result });
});
// The soak gone (it failed, or was stopped): no broker and no store are left behind.
process.once('disconnect', () => {
  void broker.shutdown().finally(() => {
    fs.rmSync(storePath, { recursive: true, force: true });
    process.exit(1);
  });
});
process.send({
  ready: true,
  storePath,
  remoting: broker.remotingAddress,
  http: broker.address,
  wide: broker.options.maxBufferedBytes,
});
