/**
 * A set for hot add/remove paths on long-lived owners: sends and pulls in flight, held pulls, abort
 * callbacks. Items sit in array slots that are cleared on removal and reused.
 *
 * Why not a `Set`: V8 rehashes a Set's table as entries come and go, and the replaced table keeps a
 * pointer to its successor. Once one table of a long-lived Set has reached the old generation, that
 * chain keeps every later table, and every item ever added, alive across young-generation collections
 * until the next full GC, so a small Set with heavy traffic can promote orders of magnitude more
 * memory than the items it holds. A slot array only reallocates when it grows, and a cleared slot
 * points at nothing.
 * @pure
 */
export class SlotSet<T extends object> {
  readonly #slots: (T | undefined)[] = [];
  readonly #free: number[] = [];
  #size = 0;

  /** Number of items held. */
  get size(): number {
    return this.#size;
  }

  /** Adds `item` and returns its slot, which `delete` needs. */
  add(item: T): number {
    const slot = this.#free.length > 0 ? (this.#free.pop() as number) : this.#slots.length;
    this.#slots[slot] = item;
    this.#size++;
    return slot;
  }

  /** Removes `item` from `slot`; does nothing when the slot no longer holds it. */
  delete(slot: number, item: T): void {
    if (this.#slots[slot] !== item) return;
    this.#slots[slot] = undefined;
    this.#free.push(slot);
    this.#size--;
  }

  /** Any one item held, or undefined when empty. */
  any(): T | undefined {
    if (this.#size === 0) return undefined;
    for (const item of this.#slots) if (item !== undefined) return item;
    return undefined;
  }

  /** The items held now, as a new array (the set may change while the caller goes through it). */
  toArray(): T[] {
    const out: T[] = [];
    if (this.#size === 0) return out;
    for (const item of this.#slots) if (item !== undefined) out.push(item);
    return out;
  }
}
