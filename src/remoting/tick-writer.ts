/**
 * Gathers the frames written to a socket within one tick into one system call: the first write of a
 * tick corks the socket and a `process.nextTick` uncorks it, so answers that arrive together (one read
 * holding several responses, each continuation writing its next request) leave in one `writev`
 * instead of one `write` each. The frames go out before the event loop polls again, so no delay is
 * added.
 */
import type { Socket } from 'node:net';
import { nextTick } from 'node:process';

export class TickWriter {
  readonly #socket: Socket;
  #corked = false;
  readonly #uncork = (): void => {
    this.#corked = false;
    this.#socket.uncork();
  };

  constructor(socket: Socket) {
    this.#socket = socket;
  }

  /**
   * Writes a frame: `head`, then `body` when the frame's body is kept apart (it is not copied);
   * `bodyWritten` runs once the socket no longer needs the body (written out, or the socket failed).
   */
  write(head: Buffer, body?: Uint8Array | null, bodyWritten?: () => void): void {
    if (!this.#corked) {
      this.#corked = true;
      this.#socket.cork();
      nextTick(this.#uncork);
    }
    this.#socket.write(head);
    if (body && body.length > 0) this.#socket.write(body, bodyWritten);
  }
}
