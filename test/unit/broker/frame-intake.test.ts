/**
 * FrameIntake, the remoting listener's framing under its byte budget: frames split across reads come out
 * whole; a frame longer than one read is gathered while it arrives, into a slot of the buffer pool that
 * later frames reuse (up to 1 MiB) or into memory of its own that a close gives back within a few turns of
 * the event loop; and slotUntilAnswered decides who may keep a slot.
 */
import { FrameIntake, slotUntilAnswered, type Reservation } from '../../../src/broker/remoting/frame-intake.js';
import { RequestCode } from '../../../src/protocol/index.js';
import type { RemotingCommand } from '../../../src/remoting/remoting-command-model.js';
import { acquirePullBody, releasePullBody } from '../../../src/store/index.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const ok = (): Reservation => 'ok';

/** A frame of `n` bytes after its length prefix, byte i of the payload being i % 251. */
function frame(n: number): Buffer {
  const f = Buffer.alloc(4 + n);
  f.writeInt32BE(n, 0);
  for (let i = 0; i < n; i++) f[4 + i] = i % 251;
  return f;
}

/** Feeds `bytes` to `intake` in reads of `read` bytes; the frames that came out. */
function feed(intake: FrameIntake, bytes: Buffer, read: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += read) {
    intake.push(Buffer.from(bytes.subarray(at, at + read)));
    for (let f = intake.next(); f !== null && f !== 'wait'; f = intake.next()) out.push(Buffer.from(f));
  }
  return out;
}

test('small and large frames split across reads, and several in one read, come out whole and in order', () => {
  const frames = [frame(10), frame(300 * KiB), frame(4), frame(70 * KiB), frame(64 * KiB + 1)];
  const stream = Buffer.concat(frames);
  for (const read of [1000, 7 * KiB, 64 * KiB, stream.length]) {
    const intake = new FrameIntake(16 * MiB, ok);
    const out = feed(intake, stream, read);
    expect(out.map((f) => f.length)).toEqual(frames.map((f) => f.length - 4));
    out.forEach((f, i) => expect(f.equals((frames[i] as Buffer).subarray(4))).toBe(true));
    expect(intake.buffered).toBe(0);
    expect(intake.inProgress).toBe(false);
  }
});

test('a large frame cut short by a close gives its memory back when cleared, not at the next collection', async () => {
  const announced = 64 * MiB;
  const intake = new FrameIntake(announced + 4, ok);
  const prefix = Buffer.alloc(4);
  prefix.writeInt32BE(announced, 0);
  intake.push(prefix);
  expect(intake.next()).toBeNull();
  for (let sent = 0; sent < 48 * MiB; sent += 64 * KiB) {
    intake.push(Buffer.alloc(64 * KiB, 1));
    expect(intake.next()).toBeNull();
  }
  expect(intake.buffered).toBe(4 + 48 * MiB);
  const before = process.memoryUsage().rss;
  intake.clear();
  // The reads' own buffers are garbage either way; the frame's 48 MiB must leave within a few turns.
  for (let turn = 0; turn < 1000 && process.memoryUsage().rss >= before - 32 * MiB; turn++) {
    await new Promise((resolve) => setImmediate(resolve));
  }
  expect(process.memoryUsage().rss).toBeLessThan(before - 32 * MiB);
  expect(intake.buffered).toBe(0);
  expect(intake.inProgress).toBe(false);
});

test('frameReady says whether next() has a whole frame (small or gathered) or a length to refuse', () => {
  const stream = Buffer.concat([frame(10), frame(2 * MiB), frame(4)]);
  for (const read of [1000, 64 * KiB, 3 * MiB]) {
    const intake = new FrameIntake(16 * MiB, ok);
    let frames = 0;
    for (let at = 0; at < stream.length; at += read) {
      intake.push(Buffer.from(stream.subarray(at, at + read)));
      for (;;) {
        const ready = intake.frameReady;
        const f = intake.next();
        expect(f !== null).toBe(ready);
        if (f === null || f === 'wait') break;
        frames++;
      }
    }
    expect(frames).toBe(3);
    expect(intake.frameReady).toBe(false);
  }
  const bad = new FrameIntake(16 * MiB, ok);
  bad.push(Buffer.from([0xff, 0xff, 0xff, 0xf0]));
  expect(bad.frameReady).toBe(true);
  expect(() => bad.next()).toThrow(/negative/);
  const tooLarge = new FrameIntake(1 * MiB, ok);
  tooLarge.push(frame(2 * MiB).subarray(0, 8));
  expect(tooLarge.frameReady).toBe(true);
  expect(() => tooLarge.next()).toThrow(/maximum frame length/);
});

/** feed(), also taking each frame's pool slot (null when it has none) right after its next(). */
function feedTaking(intake: FrameIntake, bytes: Buffer, read: number): Array<[Buffer, Buffer | null]> {
  const out: Array<[Buffer, Buffer | null]> = [];
  for (let at = 0; at < bytes.length; at += read) {
    intake.push(Buffer.from(bytes.subarray(at, at + read)));
    for (let f = intake.next(); f !== null && f !== 'wait'; f = intake.next()) out.push([f, intake.takePooled()]);
  }
  return out;
}

test('a frame longer than one read comes out of a pool slot, which the next frame reuses once handed back', () => {
  const intake = new FrameIntake(16 * MiB, ok);
  const first = frame(100 * KiB);
  const [[f1, slot]] = feedTaking(intake, first, 7 * KiB) as [[Buffer, Buffer | null]];
  expect(f1.equals(first.subarray(4))).toBe(true);
  expect(slot).not.toBeNull();
  expect(f1.buffer).toBe(slot!.buffer); // the frame is a view of its slot
  expect(intake.takePooled()).toBeNull(); // taken once
  releasePullBody(slot!);
  const second = Buffer.from(frame(90 * KiB).map((b) => b ^ 0x5a));
  second.writeInt32BE(90 * KiB, 0);
  const [[f2, reused]] = feedTaking(intake, second, 9 * KiB) as [[Buffer, Buffer | null]];
  expect(f2.equals(second.subarray(4))).toBe(true);
  expect(reused!.buffer).toBe(slot!.buffer); // the same memory, now holding the second frame
  releasePullBody(reused!);
});

test('frames that need no gathering, or are too large for the pool, come with no slot', () => {
  const intake = new FrameIntake(16 * MiB, ok);
  const whole = feedTaking(intake, frame(100 * KiB), 200 * KiB); // whole in one read: a view of it
  const large = feedTaking(intake, frame(2 * MiB), 64 * KiB); // memory of its own
  const small = feedTaking(intake, frame(1000), 100);
  for (const got of [whole, large, small]) {
    expect(got).toHaveLength(1);
    expect(got[0]![1]).toBeNull();
  }
});

test('a pooled frame cut short by a close goes back to the pool', () => {
  // The pool hands out its most recently freed slot first: free one, and the cut frame gathers into it.
  const known = acquirePullBody(300 * KiB);
  releasePullBody(known);
  const intake = new FrameIntake(16 * MiB, ok);
  intake.push(frame(300 * KiB).subarray(0, 64 * KiB));
  expect(intake.next()).toBeNull();
  intake.clear();
  const again = acquirePullBody(300 * KiB);
  expect(again.buffer).toBe(known.buffer);
  releasePullBody(again);
});

test('slotUntilAnswered: a send keeps its slot until answered; anything else gets its own copy of the body', () => {
  const command = (code: number, flag: number, body: Buffer): RemotingCommand => ({
    code,
    language: 'JAVA',
    version: 409,
    opaque: 1,
    flag,
    remark: null,
    extFields: {},
    body,
  });
  for (const code of [RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE]) {
    const slot = acquirePullBody(100 * KiB);
    const send = command(code, 0, slot.subarray(200));
    expect(slotUntilAnswered(send, slot)).toBe(slot);
    expect(send.body!.buffer).toBe(slot.buffer);
    releasePullBody(slot);
  }
  for (const [code, flag] of [
    [RequestCode.HEART_BEAT, 0],
    [RequestCode.SEND_MESSAGE, 1], // a response
  ] as const) {
    const slot = acquirePullBody(100 * KiB);
    slot.fill(7);
    const other = command(code, flag, slot.subarray(200));
    expect(slotUntilAnswered(other, slot)).toBeNull();
    expect(other.body!.buffer).not.toBe(slot.buffer);
    expect(other.body!.length).toBe(100 * KiB - 200);
    expect(other.body!.every((b) => b === 7)).toBe(true);
    // The slot went back: the pool hands it out again, and what is written there no longer reaches the body.
    const next = acquirePullBody(100 * KiB);
    expect(next.buffer).toBe(slot.buffer);
    next.fill(9);
    expect(other.body!.every((b) => b === 7)).toBe(true);
    releasePullBody(next);
  }
  expect(slotUntilAnswered(command(RequestCode.SEND_MESSAGE, 0, Buffer.alloc(1)), null)).toBeNull();
});
