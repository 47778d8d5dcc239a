/**
 * The caller's side of a broker call as processors see it (ConnectionInfo), shared by both listeners:
 * an HTTP request, or a remoting (TCP) connection that carries many calls. Held pulls and watches
 * register `onGone` listeners; the listener marks the connection gone once, when the client goes away.
 *
 * A class, not an object literal with a getter: V8 keeps such a literal's accessor in old space, and the
 * accessor's closure then held the whole HTTP request (its IncomingMessage, ServerResponse, body) across
 * young-generation collections. The AbortController is made only when a processor asks for `signal`
 * (watches); held pulls use `onGone`, which costs an array at most.
 */
import type { ConnectionInfo } from './broker-context.js';

export class ClientConnection implements ConnectionInfo {
  readonly remoteAddress: string;
  #heldCalls = 0;
  #controller: AbortController | undefined;
  #listeners: Array<() => void> | undefined;
  #gone = false;

  constructor(remoteAddress: string) {
    this.remoteAddress = remoteAddress;
  }

  get heldCalls(): number {
    return this.#heldCalls;
  }

  held(delta: 1 | -1): void {
    this.#heldCalls += delta;
    this.heldChanged(delta);
  }

  /** Called when a call of this connection was suspended (1) or woke or was dropped (-1). */
  protected heldChanged(_delta: 1 | -1): void {}

  get gone(): boolean {
    return this.#gone;
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#gone) this.#controller.abort(new Error('connection closed'));
    }
    return this.#controller.signal;
  }

  /**
   * Runs `listener` once when the client goes away; returns a function that removes it. A listener
   * registered after the client went away still runs (on a microtask), so a call that starts waiting
   * late is released rather than held for ever.
   */
  onGone(listener: () => void): () => void {
    if (this.#gone) {
      queueMicrotask(listener);
      return () => undefined;
    }
    (this.#listeners ??= []).push(listener);
    return () => {
      const i = this.#listeners?.indexOf(listener) ?? -1;
      if (i >= 0) this.#listeners?.splice(i, 1);
    };
  }

  /** Marks the connection gone and tells every listener, once. */
  markGone(): void {
    if (this.#gone) return;
    this.#gone = true;
    this.#controller?.abort(new Error('connection closed'));
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners) for (const l of listeners) l();
  }
}
