/**
 * Abort callbacks for many short calls that share one long-lived AbortSignal (a consumer's pull
 * signal, a caller's shutdown signal).
 * @pure
 */
import { SlotSet } from './slot-set.js';

const callbacksBySignal = new WeakMap<AbortSignal, SlotSet<() => void>>();

/**
 * Runs `fn` once when `signal` aborts (at once if it already has), unless the returned function is
 * called first. `fn` must not throw.
 *
 * Every call on one signal shares one 'abort' listener and one SlotSet, instead of adding and removing
 * a listener per call. Node's EventTarget leaves a removed listener linked to its neighbours, so once
 * one listener had lived long enough to reach the old generation (a held pull's does), it could keep
 * later calls' listeners, and through their closures each pull's answer, alive across young-generation
 * collections. A SlotSet slot is cleared on delete (a Set would chain its tables: see SlotSet).
 */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  if (signal.aborted) {
    fn();
    return () => {};
  }
  let callbacks = callbacksBySignal.get(signal);
  if (callbacks === undefined) {
    const created = new SlotSet<() => void>();
    callbacks = created;
    callbacksBySignal.set(signal, created);
    signal.addEventListener(
      'abort',
      () => {
        callbacksBySignal.delete(signal);
        for (const f of created.toArray()) f();
      },
      { once: true },
    );
  }
  const set = callbacks;
  const slot = set.add(fn);
  return () => set.delete(slot, fn);
}
