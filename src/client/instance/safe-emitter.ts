/**
 * Typed events through eventemitter3, with one difference: a listener that throws (or returns a
 * rejected promise) never reaches the emitter's caller. The error goes to `onListenerError` (the
 * client logs it) and the remaining listeners still run (kafkajs's rule that a listener
 * must not kill the consumer).
 */
import { EventEmitter } from 'eventemitter3';

export type ListenerErrorHandler = (err: unknown, event: string | symbol) => void;

export class SafeEventEmitter<Events extends EventEmitter.ValidEventTypes> extends EventEmitter<Events> {
  readonly #onceFns = new Map<unknown, Set<unknown>>();
  readonly #onListenerError: ListenerErrorHandler;

  constructor(onListenerError: ListenerErrorHandler = () => undefined) {
    super();
    this.#onListenerError = onListenerError;
  }

  override once<T extends EventEmitter.EventNames<Events>>(
    event: T,
    fn: EventEmitter.EventListener<Events, T>,
    context?: unknown,
  ): this {
    let set = this.#onceFns.get(event);
    if (!set) this.#onceFns.set(event, (set = new Set()));
    set.add(fn);
    return super.once(event, fn, context);
  }

  override emit<T extends EventEmitter.EventNames<Events>>(
    event: T,
    ...args: EventEmitter.EventArgs<Events, T>
  ): boolean {
    const fns = this.listeners(event);
    if (fns.length === 0) return false;
    const onceSet = this.#onceFns.get(event);
    for (const fn of fns) {
      if (onceSet?.delete(fn)) super.removeListener(event, fn, undefined, true);
      try {
        const r: unknown = (fn as (...a: unknown[]) => unknown).apply(this, args);
        if (r !== null && typeof r === 'object' && typeof (r as Promise<unknown>).then === 'function')
          (r as Promise<unknown>).then(undefined, (err: unknown) => this.#report(err, event));
      } catch (err) {
        this.#report(err, event);
      }
    }
    return true;
  }

  #report(err: unknown, event: string | symbol): void {
    try {
      this.#onListenerError(err, event);
    } catch {
      // The error handler itself failed: nothing sensible is left to do with the error.
    }
  }
}
