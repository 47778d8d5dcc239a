/**
 * The producer's auto-batching: sends of one topic made in the same turn of the event loop are handed
 * over together, so they can travel as one SEND_BATCH_MESSAGE. Nothing waits for a later turn: a group
 * is handed over at the end of the turn it was started in (`setImmediate`, which also keeps the loop
 * from blocking in its poll phase meanwhile), or at once when it is full. A lone send is handed over
 * alone, so code that awaits each send sees no change.
 *
 * A group's items are in the order they were added; `dispatch` must settle every item it gets and must
 * not throw.
 * @pure
 */

export interface AccumulatorLimits {
  /** Most items in one group. */
  readonly maxMessages: number;
  /** Most bytes in one group (the sum of the sizes given to `add`); a larger item goes alone. */
  readonly maxBytes: number;
}

interface Group<T> {
  readonly key: string;
  items: T[];
  bytes: number;
}

export class SendAccumulator<T> {
  readonly #limits: AccumulatorLimits;
  readonly #dispatch: (key: string, items: T[]) => void;
  readonly #schedule: (run: () => void) => void;
  /**
   * One group per key, kept for the accumulator's life: a producer sends to a handful of topics, and a
   * map whose entries come and go every turn would rehash (see SlotSet for what that costs).
   */
  readonly #groups = new Map<string, Group<T>>();
  /** Groups holding items, in the order they got their first one. */
  #open: Group<T>[] = [];
  #scheduled = false;
  readonly #run = (): void => {
    this.#scheduled = false;
    this.flush();
  };

  constructor(
    limits: AccumulatorLimits,
    dispatch: (key: string, items: T[]) => void,
    schedule: (run: () => void) => void = (run) => void setImmediate(run),
  ) {
    this.#limits = limits;
    this.#dispatch = dispatch;
    this.#schedule = schedule;
  }

  /** Adds `item` (of `bytes` bytes) to `key`'s group. */
  add(key: string, item: T, bytes: number): void {
    const { maxMessages, maxBytes } = this.#limits;
    if (bytes > maxBytes) {
      this.#dispatch(key, [item]);
      return;
    }
    let group = this.#groups.get(key);
    if (group === undefined) {
      group = { key, items: [], bytes: 0 };
      this.#groups.set(key, group);
    }
    if (group.items.length > 0 && group.bytes + bytes > maxBytes) this.#handOver(group);
    if (group.items.length === 0) this.#open.push(group);
    group.items.push(item);
    group.bytes += bytes;
    if (group.items.length >= maxMessages) this.#handOver(group);
    else if (!this.#scheduled) {
      this.#scheduled = true;
      this.#schedule(this.#run);
    }
  }

  /** Hands over every group now (the producer's shutdown does, so nothing waits for the next turn). */
  flush(): void {
    const open = this.#open;
    if (open.length === 0) return;
    this.#open = [];
    for (const group of open) if (group.items.length > 0) this.#take(group);
  }

  #handOver(group: Group<T>): void {
    const i = this.#open.indexOf(group);
    if (i >= 0) this.#open.splice(i, 1);
    this.#take(group);
  }

  #take(group: Group<T>): void {
    const items = group.items;
    group.items = [];
    group.bytes = 0;
    this.#dispatch(group.key, items);
  }
}
