/**
 * Gives back the memory a burst left dead once the process goes quiet. V8 collects garbage when its heap
 * fills or when external memory (Buffers, ArrayBuffers) has grown by its limit (64 MiB) since the last
 * full collection, and a quiet process does neither. So after a burst that read and dropped many socket
 * buffers and frames (a flood of large or partial frames, a client that stopped reading its answers), an
 * idle broker held tens of MiB of dead Buffers for minutes, until traffic came back. Every few seconds,
 * then, two things are compared with where they stood at the last collection this module prompted: the
 * process's heap and external memory (what was allocated since; V8 brings the figure down only when it
 * collects), and the bytes the brokers' listeners have given back (what they read and answered, most of
 * it garbage once given back, though the footprint does not show that). When either has grown by
 * enough and the event loop was idle over the interval, one full collection is prompted.
 *
 * Node has no call for a collection without `--expose-gc`; the one used here is V8's own `gc()`, taken
 * once from a context made while that flag is set for that moment only (as test runners that report heap
 * use do): the flag is set back at once, so no other context gets a `gc` global (a flag already on, from
 * the command line or set at run time, is left as it is). The collection runs as an asynchronous task,
 * not inside the timer's call. One watcher serves every broker of the process (collection is
 * process-wide); it runs on an unref'd timer while a broker holds it.
 *
 * While a flood of large frames is read the same happens on a small scale: each socket read is a Buffer of
 * its own, dead at once (the listener gathers a large frame into pooled memory as it arrives), but with
 * almost no JavaScript allocated around them nothing collects the reads until they reach V8's external
 * limit, and glibc keeps the heap that peak needed (it gives back only the top of its heap). So the
 * listeners report the bytes they read, and when external memory has grown by a few MiB over a few MiB
 * read, one young-generation collection (a millisecond or less) is prompted (YoungPromptPolicy).
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { clearInterval, setInterval } from 'node:timers';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** What the watcher compares: bytes of JavaScript heap in use plus external memory. */
const collectableFootprint = (): number => {
  const h = getHeapStatistics();
  return h.used_heap_size + h.external_memory;
};

type GcFunction = (options: { type: 'major' | 'minor'; execution: 'async' }) => Promise<void> | undefined;

/** V8's gc(), null when the engine would not lend it, undefined until first asked for. */
let gcFunction: GcFunction | null | undefined;

/** The `gc` a new context gets, when `--expose-gc` is on (from the command line, or set by someone at run time). */
const contextGc = (): GcFunction | null => {
  const lent = runInNewContext("typeof gc === 'function' ? gc : null") as unknown;
  return typeof lent === 'function' ? (lent as GcFunction) : null;
};

function v8Gc(): GcFunction | null {
  if (gcFunction !== undefined) return gcFunction;
  gcFunction = null;
  try {
    // A flag already on is used as it is, and left on.
    gcFunction = contextGc();
    if (gcFunction) return gcFunction;
    setFlagsFromString('--expose-gc');
    try {
      gcFunction = contextGc();
    } finally {
      setFlagsFromString('--no-expose-gc');
    }
  } catch {
    gcFunction = null;
  }
  return gcFunction;
}

/**
 * Starts one collection (`major`: the whole heap; `minor`: the young generation), run as a task of its
 * own; false when V8 would not lend its gc().
 */
export function promptCollection(type: 'major' | 'minor' = 'major'): boolean {
  const gc = v8Gc();
  if (!gc) return false;
  try {
    gc({ type, execution: 'async' })?.catch(() => undefined);
    return true;
  } catch {
    return false;
  }
}

/**
 * When to prompt a collection, from samples of the footprint, of the bytes given back so far (a running
 * total) and of the event loop's utilization over the interval before each. The growth that counts is
 * at least `thresholdBytes` and at least `growthFraction` of the footprint's floor: a full collection
 * costs in proportion to what is live, so a large process waits for more garbage before paying for one,
 * as V8 does. Between two prompted collections pass at least `minSamplesBetween` samples.
 * @pure
 */
export class ReclaimPolicy {
  /** The lowest footprint since the last prompted collection. */
  #floor = Number.POSITIVE_INFINITY;
  /** The bytes-given-back total at the last prompted collection (or its lowest since: a source may leave). */
  #releasedMark = Number.POSITIVE_INFINITY;
  #afterCollection = false;
  #samplesSince = Number.POSITIVE_INFINITY;

  constructor(
    readonly thresholdBytes: number,
    /** Utilization (0-1) of the event loop below which the process counts as idle. */
    readonly idleUtilization: number,
    readonly growthFraction = 0.25,
    readonly minSamplesBetween = 6,
  ) {}

  /** Whether to prompt a collection now. */
  sample(footprint: number, released: number, utilization: number): boolean {
    this.#samplesSince++;
    this.#releasedMark = Math.min(this.#releasedMark, released);
    if (this.#afterCollection) {
      // What the collection left is the new floor: live data that grew is not collected over and over.
      this.#afterCollection = false;
      this.#floor = footprint;
      return false;
    }
    this.#floor = Math.min(this.#floor, footprint);
    if (utilization >= this.idleUtilization || this.#samplesSince < this.minSamplesBetween) return false;
    const growth = Math.max(footprint - this.#floor, released - this.#releasedMark);
    if (growth < Math.max(this.thresholdBytes, this.#floor * this.growthFraction)) return false;
    this.#afterCollection = true;
    this.#releasedMark = released;
    this.#samplesSince = 0;
    return true;
  }
}

export interface IdleReclaimOptions {
  /** How often the footprint is sampled. Default 5,000 ms. */
  intervalMs?: number;
  /** Least growth past the floor that prompts a collection once idle. Default 16 MiB. */
  thresholdBytes?: number;
  /** Event-loop utilization below which the process is idle. Default 0.1. */
  idleUtilization?: number;
}

/**
 * When to prompt a young-generation collection while frames are read, from looks at V8's external memory
 * (array buffers included) taken every so many bytes read: when it has grown by `growthBytes` past its
 * lowest look since the last prompt. The dead socket reads of large frames are external memory with
 * almost no JavaScript allocation around them, so nothing else would collect them until they reach V8's
 * own external-memory trigger; ordinary traffic allocates enough to collect them on its own, and its
 * external memory does not grow.
 * @pure
 */
export class YoungPromptPolicy {
  #floor = Number.POSITIVE_INFINITY;

  constructor(readonly growthBytes: number) {}

  /** Whether to prompt a young-generation collection now, given the external memory of this look. */
  sample(external: number): boolean {
    this.#floor = Math.min(this.#floor, external);
    if (external - this.#floor < this.growthBytes) return false;
    this.#floor = Number.POSITIVE_INFINITY;
    return true;
  }
}

/** Bytes read by the listeners between two looks at external memory. */
export const READ_LOOK_BYTES = 2 * 1024 * 1024;
/** Growth of external memory between looks that prompts a young-generation collection. */
const YOUNG_PROMPT_GROWTH_BYTES = 4 * 1024 * 1024;

interface Watcher {
  stop(): void;
  prompted: number;
  promptedYoung: number;
  young: YoungPromptPolicy;
  readSinceLook: number;
}

let watcher: Watcher | undefined;

/**
 * Counts `bytes` a listener has just read from a socket, while a broker holds the watcher (nothing
 * otherwise): every READ_LOOK_BYTES of them, V8's external memory is looked at (YoungPromptPolicy).
 */
export function noteBytesRead(bytes: number): void {
  const w = watcher;
  if (w === undefined) return;
  w.readSinceLook += bytes;
  if (w.readSinceLook < READ_LOOK_BYTES) return;
  w.readSinceLook = 0;
  if (w.young.sample(getHeapStatistics().external_memory) && promptCollection('minor')) w.promptedYoung++;
}

/** Each holder's running total of bytes given back. */
const sources = new Set<() => number>();
const releasedTotal = (): number => {
  let total = 0;
  for (const s of sources) total += s();
  return total;
};

function watch(o: Required<IdleReclaimOptions>): Watcher {
  const policy = new ReclaimPolicy(o.thresholdBytes, o.idleUtilization);
  // The first marks are taken now, before any traffic: a burst that starts before the first interval ends
  // is then measured from them (a busy utilization, so this sample never prompts).
  policy.sample(collectableFootprint(), releasedTotal(), 1);
  let elu: EventLoopUtilization = performance.eventLoopUtilization();
  const w: Watcher = {
    stop: () => clearInterval(timer),
    prompted: 0,
    promptedYoung: 0,
    young: new YoungPromptPolicy(YOUNG_PROMPT_GROWTH_BYTES),
    readSinceLook: 0,
  };
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, elu).utilization;
    elu = now;
    if (policy.sample(collectableFootprint(), releasedTotal(), busy) && promptCollection('major')) w.prompted++;
  }, o.intervalMs);
  timer.unref();
  return w;
}

/**
 * Holds the process's watcher (started by the first holder, with its options) until the returned
 * function is called; the last holder's release stops it. `released` is the holder's running total of
 * bytes given back (a broker's listener budget). Calling the release twice releases once.
 */
export function holdIdleReclaim(released: () => number = () => 0, options: IdleReclaimOptions = {}): () => void {
  // A function of its own per holder, so that two holders with the same source count twice, as they should.
  const source = (): number => released();
  sources.add(source);
  watcher ??= watch({
    intervalMs: options.intervalMs ?? 5000,
    thresholdBytes: options.thresholdBytes ?? 16 * 1024 * 1024,
    idleUtilization: options.idleUtilization ?? 0.1,
  });
  let done = false;
  return () => {
    if (done) return;
    done = true;
    sources.delete(source);
    if (sources.size === 0) {
      watcher?.stop();
      watcher = undefined;
    }
  };
}

/** Full collections the running watcher prompted, 0 when none runs (for tests and tools). */
export const promptedCollections = (): number => watcher?.prompted ?? 0;

/** Young-generation collections prompted while the watcher runs, 0 when none runs (for tests and tools). */
export const promptedYoungCollections = (): number => watcher?.promptedYoung ?? 0;

/** Whether a broker holds the watcher now (for tests and tools). */
export const idleReclaimRunning = (): boolean => watcher !== undefined;
