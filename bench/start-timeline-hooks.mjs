// Loaded with `node --import ./bench/start-timeline-hooks.mjs` into the broker and the consumer processes
// of bench/start-timeline.mjs (not meant to be used by hand). Records, on the monotonic clock that every
// process of the machine shares (process.hrtime, ms):
//   - every socket write, with the remoting code found in its first bytes (a request's code on the
//     consumer's side, an answer's on the broker's) or the command an HTTP request's path names, and
//     its length;
//   - every socket read that emits 'data' (the broker's TCP reads: the TCP client and node:http read
//     without 'data' events), with the codes found in it;
//   - marks the consumer's process sets through globalThis.__startTimelineMark(name).
// At exit it writes them as JSON to $TIMELINE_OUT.
import { Buffer } from 'node:buffer';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import process from 'node:process';

const now = () => Number(process.hrtime.bigint()) / 1e6;
const rec = { role: process.env.TIMELINE_ROLE ?? 'process', events: [], marks: [] };
/** At most this many events are kept, so a process that runs long does not grow without bound. */
const MAX_EVENTS = 100_000;

/** The remoting codes (a JSON header's `"code":N`) in the first `limit` bytes of a chunk. */
function codesIn(chunk, limit) {
  const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
  if (!bytes || typeof bytes.subarray !== 'function') return [];
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, limit)).toString('latin1');
  return [...text.matchAll(/"code":(-?\d+)/g)].map((m) => Number(m[1]));
}

/** The command an HTTP request names in its path (`POST …/v1/NAME`), if the chunk starts one. */
function httpCommandIn(chunk) {
  const head = typeof chunk === 'string' ? chunk.slice(0, 200) : chunk?.subarray?.(0, 200).toString('latin1');
  return head ? /^POST \S*\/v1\/([A-Za-z0-9_]+)/.exec(head)?.[1] : undefined;
}

/** A write's code is in its first bytes (a frame's header); a read may hold many frames. */
function record(kind, chunk) {
  if (rec.events.length >= MAX_EVENTS || !process.env.TIMELINE_OUT) return;
  const codes = codesIn(chunk, kind === 'write' ? 600 : 64 * 1024);
  const command = kind === 'write' ? httpCommandIn(chunk) : undefined;
  rec.events.push({ at: now(), kind, codes, command, bytes: chunk?.length ?? 0 });
}

const write = net.Socket.prototype.write;
net.Socket.prototype.write = function (chunk, ...rest) {
  record('write', chunk);
  return write.call(this, chunk, ...rest);
};
const emit = net.Socket.prototype.emit;
net.Socket.prototype.emit = function (event, chunk, ...rest) {
  if (event === 'data') record('read', chunk);
  return emit.call(this, event, chunk, ...rest);
};

globalThis.__startTimelineMark = (name) => rec.marks.push({ name, at: now() });

process.on('exit', () => {
  if (process.env.TIMELINE_OUT) writeFileSync(process.env.TIMELINE_OUT, JSON.stringify(rec));
});
