/**
 * Async iteration over a LitePullConsumer: `for await (const message of consumer)` (one message at a
 * time) and `for await (const batch of consumer.batches())` (one pull's messages at a time).
 *
 * The commit point: a message (or batch) counts as consumed once the loop body that received it has
 * finished, i.e. when the loop asks for the next one. So:
 * - a `break`, `return` or `throw` in the body leaves the message (batch) it was processing
 *   unconsumed: it goes back to the front of the consumer's buffer, is never committed by this loop,
 *   and is the first thing the next `poll` or loop gets;
 * - an aborted `signal`, or `shutdown()`, ends the loop at its next step: the message whose body just
 *   finished is consumed, the rest of its batch goes back to the buffer;
 * - the message loop records consumption one pull's batch at a time (when the batch's last body
 *   finishes, and for the part done when the loop ends), so a commit made while a batch is being
 *   walked covers the messages before that batch: it lags by at most one batch, never runs ahead;
 * - auto-commit (and `commit()`) commit only consumed messages, so a crash or a shutdown while a body
 *   runs delivers that message again; it never skips one.
 */
import type { MessageExt } from '../../../common/message.js';
import type { ConsumeRequest } from './lite-pull-cache.js';

/** Options of `consumer.messages()` and `consumer.batches()`. */
export interface LitePullIterateOptions {
  /** Aborting it ends the loop (the consumer keeps running). */
  signal?: AbortSignal | undefined;
}

/** What the iterators need from the consumer. */
export interface LitePullSource {
  /** The next buffered request, or null after the wait (timeout, abort, not running). */
  take(signal: AbortSignal | undefined): Promise<ConsumeRequest | null>;
  isRunning(): boolean;
  /** Marks `messages[from, to)` of `r` consumed. */
  markConsumed(r: ConsumeRequest, from: number, to: number): void;
  /** Puts `messages[from..]` of `r` back in front of the buffer. */
  giveBack(r: ConsumeRequest, from: number): void;
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ value: undefined, done: true });

abstract class LitePullIteratorBase<T> implements AsyncIterableIterator<T> {
  protected batch: ConsumeRequest | undefined;
  /** Index in `batch` of the next message to hand out. */
  protected next_ = 0;
  #done = false;

  constructor(
    protected readonly source: LitePullSource,
    private readonly signal: AbortSignal | undefined,
  ) {}

  /** Marks what the body that just returned processed; drops an exhausted batch. */
  protected abstract settlePrevious(): void;
  /** The value to hand out from `batch` (advances `next_`). */
  protected abstract nextValue(): T;
  /** Index from which the batch goes back when the loop breaks. */
  protected abstract unprocessedFrom(): number;
  /** Marks the processed part of a batch the loop leaves early. */
  protected abstract settleOnFinish(b: ConsumeRequest, processed: number): void;

  async next(): Promise<IteratorResult<T, undefined>> {
    if (this.#done) return DONE;
    this.settlePrevious();
    if (this.#stopped()) return this.#finish(this.next_, this.next_);
    while (!this.batch) {
      const r = await this.source.take(this.signal);
      if (this.#done) {
        if (r) this.source.giveBack(r, 0);
        return DONE;
      }
      if (r) {
        this.batch = r;
        this.next_ = 0;
      } else if (this.#stopped()) {
        return this.#finish(0, 0);
      }
    }
    return { value: this.nextValue(), done: false };
  }

  /** `break`, `return` or `throw` in the loop body: the message (batch) being processed is not consumed. */
  async return(): Promise<IteratorResult<T, undefined>> {
    if (this.#done) return DONE;
    const from = this.unprocessedFrom();
    return this.#finish(from, from);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  #stopped(): boolean {
    return this.signal?.aborted === true || !this.source.isRunning();
  }

  /** Ends the loop: `messages[0, processed)` of the batch are consumed, `messages[from..]` go back. */
  #finish(processed: number, from: number): IteratorReturnResult<undefined> {
    this.#done = true;
    const b = this.batch;
    this.batch = undefined;
    if (b) this.settleOnFinish(b, processed);
    if (b && from < b.messages.length) this.source.giveBack(b, from);
    return DONE;
  }
}

/** `for await (const message of consumer)`: one message per step. */
export class LitePullMessageIterator extends LitePullIteratorBase<MessageExt> {
  /** A whole batch is marked at once when its last message's body has finished (one ProcessQueue update). */
  protected settlePrevious(): void {
    const b = this.batch;
    if (!b || this.next_ < b.messages.length) return;
    this.source.markConsumed(b, 0, b.messages.length);
    this.batch = undefined;
  }

  protected settleOnFinish(b: ConsumeRequest, processed: number): void {
    this.source.markConsumed(b, 0, processed);
  }

  protected nextValue(): MessageExt {
    return (this.batch as ConsumeRequest).messages[this.next_++] as MessageExt;
  }

  protected unprocessedFrom(): number {
    return Math.max(0, this.next_ - 1);
  }
}

/** `for await (const batch of consumer.batches())`: one pull's messages per step. */
export class LitePullBatchIterator extends LitePullIteratorBase<MessageExt[]> {
  protected settlePrevious(): void {
    const b = this.batch;
    if (!b) return;
    if (this.next_ > 0) this.source.markConsumed(b, 0, b.messages.length);
    this.batch = undefined;
    this.next_ = 0;
  }

  protected nextValue(): MessageExt[] {
    const b = this.batch as ConsumeRequest;
    this.next_ = b.messages.length;
    return b.messages;
  }

  protected unprocessedFrom(): number {
    return 0;
  }

  protected settleOnFinish(): void {
    // A batch is consumed whole in settlePrevious, or not at all.
  }
}
