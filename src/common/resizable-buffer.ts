/**
 * Resizable ArrayBuffers, for memory the broker wants to give back to the OS at a moment of its choosing:
 * their pages are mapped apart from the C allocator's heap, and `resize(0)` hands them back at once,
 * where an ordinary buffer's memory waits for a collection and may then stay in the allocator's heap.
 * @pure
 */

export type ResizableArrayBuffer = ArrayBuffer & { resize(bytes: number): void; readonly resizable: boolean };

/** An ArrayBuffer of `bytes` that can be shrunk to nothing (lib ES2023 does not declare the option). */
export const resizableArrayBuffer = (bytes: number): ResizableArrayBuffer =>
  new (ArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => ResizableArrayBuffer)(bytes, {
    maxByteLength: bytes,
  });
