import { ChunkQueue } from '../../../src/remoting/chunk-queue.js';

const int32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n, 0);
  return b;
};

/** A chunk with its own memory (Buffer.from may place small buffers in a shared pool). */
const own = (bytes: number[]): Buffer => {
  const b = Buffer.alloc(bytes.length);
  b.set(bytes);
  return b;
};

describe('ChunkQueue', () => {
  test('counts the bytes pushed and keeps no empty chunk', () => {
    const q = new ChunkQueue();
    expect(q.length).toBe(0);
    q.push(Buffer.from([1, 2, 3]));
    q.push(Buffer.alloc(0));
    q.push(Buffer.from([4, 5]));
    expect(q.length).toBe(5);
    expect([...q.take(5)]).toEqual([1, 2, 3, 4, 5]);
    expect(q.length).toBe(0);
  });

  test('reads a length within the first chunk without consuming it', () => {
    const q = new ChunkQueue();
    q.push(Buffer.concat([int32(0x01020304), Buffer.from([9])]));
    expect(q.peekInt32()).toBe(0x01020304);
    expect(q.length).toBe(5);
  });

  test.each([
    ['1+3', [1, 3]],
    ['2+2', [2, 2]],
    ['3+1', [3, 1]],
    ['1+1+1+1', [1, 1, 1, 1]],
    ['1+2+rest', [1, 2, 3]],
  ])('reads a length split across chunks (%s), negative ones included', (_name, sizes) => {
    for (const value of [0x7f010203, -2, 260]) {
      const bytes = Buffer.concat([int32(value), Buffer.from([0xaa, 0xbb])]);
      const q = new ChunkQueue();
      let p = 0;
      for (const size of sizes) {
        q.push(bytes.subarray(p, p + size));
        p += size;
      }
      expect(q.peekInt32()).toBe(value);
      expect(q.length).toBe(p);
      // Peeking consumed nothing: the same bytes come out of take.
      expect(q.take(4).readInt32BE(0)).toBe(value);
    }
  });

  test('take within one chunk returns a view of it and leaves the rest queued', () => {
    const chunk = own([1, 2, 3, 4, 5, 6]);
    const q = new ChunkQueue();
    q.push(chunk);
    const first = q.take(2);
    expect([...first]).toEqual([1, 2]);
    expect(first.buffer).toBe(chunk.buffer);
    expect(first.byteOffset).toBe(chunk.byteOffset);
    const rest = q.take(4);
    expect([...rest]).toEqual([3, 4, 5, 6]);
    expect(rest.buffer).toBe(chunk.buffer);
    expect(rest.byteOffset).toBe(chunk.byteOffset + 2);
    expect(q.length).toBe(0);
    chunk[0] = 42;
    expect(first[0]).toBe(42);
  });

  test('take across chunks returns one copy joining them, and keeps what follows', () => {
    const a = own([1, 2]);
    const b = own([3, 4, 5]);
    const c = own([6, 7, 8]);
    const q = new ChunkQueue();
    q.push(a);
    q.push(b);
    q.push(c);
    const out = q.take(6);
    expect([...out]).toEqual([1, 2, 3, 4, 5, 6]);
    for (const chunk of [a, b, c]) expect(out.buffer).not.toBe(chunk.buffer);
    // The copy does not follow later writes to the chunks it came from.
    a[0] = 99;
    expect(out[0]).toBe(1);
    expect(q.length).toBe(2);
    const tail = q.take(2);
    expect([...tail]).toEqual([7, 8]);
    expect(tail.buffer).toBe(c.buffer);
  });

  test('clear drops every queued byte', () => {
    const q = new ChunkQueue();
    q.push(Buffer.from([0, 0]));
    q.push(Buffer.from([0, 9, 1]));
    q.clear();
    expect(q.length).toBe(0);
    q.push(int32(7));
    expect(q.peekInt32()).toBe(7);
    expect([...q.take(4)]).toEqual([0, 0, 0, 7]);
  });
});
