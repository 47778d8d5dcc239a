import fc from 'fast-check';
import { InvalidArgumentError } from '../../../src/common/errors.js';
import {
  DEFAULT_MAX_FRAME_LENGTH,
  FrameReader,
  RemotingDecodeError,
  RemotingFrameTooLargeError,
  decodeRemotingCommand,
  encodeRemotingCommand,
} from '../../../src/remoting/index.js';

const frameOf = (payload: Buffer): Buffer => {
  const f = Buffer.alloc(4 + payload.length);
  f.writeInt32BE(payload.length, 0);
  payload.copy(f, 4);
  return f;
};

describe('FrameReader', () => {
  test('RocketMQ: the default maximum frame is 16 MiB, length prefix included', () => {
    expect(DEFAULT_MAX_FRAME_LENGTH).toBe(16 * 1024 * 1024);
    const r = new FrameReader();
    const ok = Buffer.alloc(4);
    ok.writeInt32BE(DEFAULT_MAX_FRAME_LENGTH - 4, 0);
    expect(r.push(ok)).toEqual([]);
    const tooBig = Buffer.alloc(4);
    tooBig.writeInt32BE(DEFAULT_MAX_FRAME_LENGTH - 3, 0);
    expect(() => new FrameReader().push(tooBig)).toThrow(RemotingFrameTooLargeError);
  });

  test('splits back-to-back frames in one chunk and hands them over without the length', () => {
    const a = Buffer.from('00000000aa', 'hex');
    const b = Buffer.from('01000000bbcc', 'hex');
    const frames = new FrameReader().push(Buffer.concat([frameOf(a), frameOf(b)]));
    expect(frames.map((f) => f.toString('hex'))).toEqual([a.toString('hex'), b.toString('hex')]);
  });

  test.each([false, true])(
    'assembles a frame from any split of the stream, byte by byte included (reusesChunks %s)',
    (reusesChunks) => {
      fc.assert(
        fc.property(
          fc.array(fc.uint8Array({ minLength: 4, maxLength: 64 }), { minLength: 1, maxLength: 8 }),
          fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 50 }),
          (payloads, cuts) => {
            const stream = Buffer.concat(payloads.map((p) => frameOf(Buffer.from(p))));
            const r = new FrameReader({ reusesChunks });
            // With reusesChunks, one buffer serves every read (as a socket with `onread` uses it) and is
            // scribbled over after each push: the frames must be copies.
            const shared = Buffer.alloc(64);
            const frames: Buffer[] = [];
            let pos = 0;
            let i = 0;
            while (pos < stream.length) {
              const n = Math.min(cuts[i++ % cuts.length] as number, stream.length - pos);
              const chunk = reusesChunks
                ? shared.subarray(0, stream.copy(shared, 0, pos, pos + n))
                : stream.subarray(pos, pos + n);
              frames.push(...r.push(chunk));
              shared.fill(0xee);
              pos += n;
            }
            expect(frames.map((f) => f.toString('hex'))).toEqual(payloads.map((p) => Buffer.from(p).toString('hex')));
            expect(r.buffered).toBe(0);
          },
        ),
      );
    },
  );

  test('reusesChunks: a frame larger than the preallocation limit, cut several ways, comes out whole and is followed by a small one', () => {
    const big = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
    const stream = Buffer.concat([frameOf(big), frameOf(Buffer.from('after'))]);
    for (const cut of [1000, 65_536, 1_000_003]) {
      const r = new FrameReader({ reusesChunks: true, maxFrameLength: 8 * 1024 * 1024 });
      const shared = Buffer.alloc(cut);
      const frames: Buffer[] = [];
      for (let pos = 0; pos < stream.length; pos += cut) {
        frames.push(...r.push(shared.subarray(0, stream.copy(shared, 0, pos, pos + cut))));
        shared.fill(0xee); // the socket reuses its buffer: frames must be copies
      }
      expect(frames).toHaveLength(2);
      expect(frames[0]?.equals(big)).toBe(true);
      expect(frames[1]?.toString()).toBe('after');
      expect(r.buffered).toBe(0);
    }
  });

  test('a frame over the configured limit is refused from its length alone, before its bytes arrive', () => {
    const r = new FrameReader({ maxFrameLength: 64 });
    const head = Buffer.alloc(4);
    head.writeInt32BE(61, 0);
    let err: unknown;
    try {
      r.push(head);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RemotingFrameTooLargeError);
    expect((err as RemotingFrameTooLargeError).code).toBe('ERR_REMOTING_FRAME_TOO_LARGE');
    expect((err as RemotingFrameTooLargeError).frameLength).toBe(65);
    // The reader stays failed: the connection must be closed.
    expect(() => r.push(Buffer.alloc(1))).toThrow(RemotingFrameTooLargeError);
    r.reset();
    expect(r.push(frameOf(Buffer.alloc(60)))).toHaveLength(1);
  });

  test.each([
    ['negative', -1],
    ['zero', 0],
    ['short of the header-length word', 3],
    ['most negative', -0x80000000],
  ])('a %s length is a decode error', (_name, length) => {
    const head = Buffer.alloc(4);
    head.writeInt32BE(length, 0);
    const r = new FrameReader();
    expect(() => r.push(head)).toThrow(RemotingDecodeError);
    expect(() => r.push(head)).toThrow(/frame length/);
  });

  test('a lying length never makes it allocate: 2 GiB announced, nothing buffered beyond what came', () => {
    const r = new FrameReader({ maxFrameLength: 0x7fffffff + 4 });
    const head = Buffer.alloc(4);
    head.writeInt32BE(0x7fffffff, 0);
    expect(r.push(head)).toEqual([]);
    expect(r.push(Buffer.alloc(1000))).toEqual([]);
    expect(r.buffered).toBe(1004);
  });

  test('frames from encodeRemotingCommand decode after splitting', () => {
    const body = Buffer.from('hello');
    const wire = Buffer.concat([
      encodeRemotingCommand({ code: 11, opaque: 1, extFields: { topic: 'T' } }),
      encodeRemotingCommand({ code: 0, opaque: 1, flag: 1, body }, { serializeType: 'ROCKETMQ' }),
    ]);
    const r = new FrameReader();
    const frames = [...r.push(wire.subarray(0, 7)), ...r.push(wire.subarray(7))];
    expect(frames.map((f) => decodeRemotingCommand(f).opaque)).toEqual([1, 1]);
    expect(decodeRemotingCommand(frames[1] as Buffer).body?.toString()).toBe('hello');
  });

  test('reusesChunks: a large announced length allocates nothing before its bytes come; limits still apply', () => {
    const r = new FrameReader({ maxFrameLength: 0x7fffffff + 4, reusesChunks: true });
    const head = Buffer.alloc(4);
    head.writeInt32BE(0x7fffffff, 0);
    expect(r.push(head)).toEqual([]);
    expect(r.push(Buffer.alloc(1000))).toEqual([]);
    expect(r.buffered).toBe(1004);
    const small = new FrameReader({ maxFrameLength: 64, reusesChunks: true });
    head.writeInt32BE(61, 0);
    expect(() => small.push(head)).toThrow(RemotingFrameTooLargeError);
    head.writeInt32BE(2, 0);
    expect(() => new FrameReader({ reusesChunks: true }).push(head)).toThrow(/frame length 2/);
  });

  test('the option is validated', () => {
    expect(() => new FrameReader({ maxFrameLength: 3 })).toThrow(InvalidArgumentError);
    expect(() => new FrameReader({ maxFrameLength: 1.5 })).toThrow(/maxFrameLength/);
  });
});
