/**
 * FrameIntake, the remoting listener's framing under its byte budget: frames split across reads come out
 * whole, and a large frame still arriving is gathered into memory of its own that a close gives back within
 * a few turns of the event loop.
 */
import { FrameIntake, type Reservation } from '../../../src/broker/remoting/frame-intake.js';

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
