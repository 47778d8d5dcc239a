/**
 * Time goes through a clock that tests can drive. Every timer an object creates is
 * created here and cleared by its owner.
 * @pure
 */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
  setInterval(fn: () => void, ms: number): TimerHandle;
  clearInterval(handle: TimerHandle): void;
}

export type TimerHandle = { readonly __timer: unique symbol } | ReturnType<typeof setTimeout>;

/**
 * The real clock. Timers keep the process alive on purpose (a started consumer should), so every
 * owner must clear its timers on shutdown.
 */
export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
  clearTimeout: (h: TimerHandle) => clearTimeout(h as ReturnType<typeof setTimeout>),
  setInterval: (fn: () => void, ms: number) => setInterval(fn, ms),
  clearInterval: (h: TimerHandle) => clearInterval(h as ReturnType<typeof setInterval>),
});

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function delay(ms: number, signal?: AbortSignal, clock: Clock = systemClock): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clock.clearTimeout(handle);
      reject(signal?.reason);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
