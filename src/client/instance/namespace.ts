/**
 * Namespaces (RocketMQ's ClientConfig.namespace and NamespaceUtil): a client with a namespace sends
 * topics and groups as `ns%Name`, retry and dead-letter topics as `%RETRY%ns%group` and
 * `%DLQ%ns%group`, and leaves system topics and groups alone. Each client maps names once at its API
 * edge with a `NameMapper`: its internals only ever see the wire names, its caller only the plain ones.
 */
import { InvalidArgumentError } from '../../common/errors.js';
import {
  DLQ_GROUP_TOPIC_PREFIX,
  RETRY_GROUP_TOPIC_PREFIX,
  isSystemTopicName,
  type MessageQueue,
} from '../../common/message.js';

/** RocketMQ's NamespaceUtil.NAMESPACE_SEPARATOR. */
export const NAMESPACE_SEPARATOR = '%';

/** MixAll.CID_RMQ_SYS_PREFIX: system groups are never namespaced. */
const SYSTEM_GROUP_PREFIX = 'CID_RMQ_SYS_';

/**
 * The characters a namespace may hold: those of a topic name (TopicValidator) without `%`, which
 * separates the namespace from the name, and `|`.
 */
const NAMESPACE_PATTERN = /^[A-Za-z0-9_-]+$/;
/** A namespace leaves room for a name within a topic's 127 characters. */
const NAMESPACE_MAX_LENGTH = 64;

/** Why `ns` is not a usable namespace, or null. */
export function namespaceProblem(ns: unknown): string | null {
  if (typeof ns !== 'string') return 'must be a string';
  if (ns.length === 0 || ns.length > NAMESPACE_MAX_LENGTH)
    return `must be 1 to ${NAMESPACE_MAX_LENGTH} characters long`;
  if (!NAMESPACE_PATTERN.test(ns))
    return `'${ns}' may only hold letters, digits, '_' and '-' ('%' separates the namespace from the name)`;
  return null;
}

/** Throws an InvalidArgumentError (field `namespace`) unless `ns` is a usable namespace. */
export function checkNamespace(ns: unknown): string {
  const problem = namespaceProblem(ns);
  if (problem !== null) throw new InvalidArgumentError('namespace', problem);
  return ns as string;
}

/** A system topic or group (TopicValidator.isSystemTopic, MixAll.isSysConsumerGroup). */
export function isSystemResource(name: string): boolean {
  return isSystemTopicName(name) || name.startsWith(SYSTEM_GROUP_PREFIX);
}

/** The `%RETRY%` or `%DLQ%` prefix of `name`, or ''. */
function groupTopicPrefix(name: string): string {
  if (name.startsWith(RETRY_GROUP_TOPIC_PREFIX)) return RETRY_GROUP_TOPIC_PREFIX;
  if (name.startsWith(DLQ_GROUP_TOPIC_PREFIX)) return DLQ_GROUP_TOPIC_PREFIX;
  return '';
}

/** RocketMQ's NamespaceUtil.wrapNamespace: `Topic` → `ns%Topic`, `%RETRY%g` → `%RETRY%ns%g`. */
export function wrapNamespace(ns: string | undefined, name: string): string {
  if (!ns || typeof name !== 'string' || !name || isSystemResource(name)) return name;
  const prefix = groupTopicPrefix(name);
  const bare = name.slice(prefix.length);
  if (bare.startsWith(ns + NAMESPACE_SEPARATOR)) return name;
  return prefix + ns + NAMESPACE_SEPARATOR + bare;
}

/**
 * RocketMQ's NamespaceUtil.withoutNamespace(resource, namespace): strips `ns` only; a name of another
 * namespace, a plain name and a system name come back unchanged.
 */
export function withoutNamespace(ns: string | undefined, name: string): string {
  if (!ns || typeof name !== 'string' || !name || isSystemResource(name)) return name;
  const prefix = groupTopicPrefix(name);
  const bare = name.slice(prefix.length);
  const head = ns + NAMESPACE_SEPARATOR;
  return bare.startsWith(head) ? prefix + bare.slice(head.length) : name;
}

/** The shape of an AllocateMessageQueueStrategy (declared here: the strategies live in client/consumer). */
export interface AllocateStrategyLike {
  allocate(
    consumerGroup: string,
    currentCID: string | null | undefined,
    mqAll: readonly MessageQueue[] | null | undefined,
    cidAll: readonly (string | null)[] | null | undefined,
  ): MessageQueue[];
  getName(): string;
}

const NAME_KEYS: ReadonlySet<string> = new Set(['topic', 'consumerGroup', 'producerGroup', 'group']);
const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype;

/** Maps names between what a client's caller sees and what travels to the brokers. */
export class NameMapper {
  /** The namespace, or undefined for a client without one (then every mapping is the identity). */
  readonly namespace: string | undefined;
  readonly #textHead: string;

  /** An empty namespace is none, as RocketMQ's StringUtils.isEmpty checks treat it. */
  constructor(namespace: string | undefined) {
    this.namespace = namespace === undefined || namespace === '' ? undefined : checkNamespace(namespace);
    this.#textHead = this.namespace === undefined ? '' : this.namespace + NAMESPACE_SEPARATOR;
  }

  get active(): boolean {
    return this.namespace !== undefined;
  }

  /** A topic or group as it travels: `ns%Name` (retry and DLQ topics `%RETRY%ns%group`). */
  wrap(name: string): string {
    return wrapNamespace(this.namespace, name);
  }

  /** A topic or group as the caller sees it; names of another namespace are kept whole. */
  unwrap(name: string): string {
    return withoutNamespace(this.namespace, name);
  }

  /** Whether `name` (as the broker lists it) is this namespace's or a system topic or group. */
  owns(name: string): boolean {
    if (!this.active || isSystemResource(name)) return true;
    const bare = name.slice(groupTopicPrefix(name).length);
    return bare.startsWith(this.#textHead);
  }

  /** `mq` on the wire; what is not a queue is left for the caller's checks to refuse. */
  wrapQueue(mq: MessageQueue): MessageQueue {
    if (!this.active || mq === null || typeof mq !== 'object' || typeof mq.topic !== 'string') return mq;
    return { topic: this.wrap(mq.topic), brokerName: mq.brokerName, queueId: mq.queueId };
  }

  unwrapQueue(mq: MessageQueue): MessageQueue {
    if (!this.active || mq === null || typeof mq !== 'object' || typeof mq.topic !== 'string') return mq;
    return { topic: this.unwrap(mq.topic), brokerName: mq.brokerName, queueId: mq.queueId };
  }

  /** A copy of `msg` whose topic is the plain name (the original keeps the wire name the client needs). */
  unwrapMessage<T extends { topic: string }>(msg: T): T {
    if (!this.active) return msg;
    const topic = this.unwrap(msg.topic);
    return topic === msg.topic ? msg : { ...msg, topic };
  }

  /**
   * A listener's context whose `messageQueue` is the plain queue; every other field (what the listener
   * sets, such as `ackIndex`) reads and writes through to the client's own context.
   */
  unwrapContext<C extends { readonly messageQueue: MessageQueue }>(ctx: C): C {
    if (!this.active) return ctx;
    const mq = this.unwrapQueue(ctx.messageQueue);
    return new Proxy(ctx, {
      get: (target, key) => (key === 'messageQueue' ? mq : (Reflect.get(target, key) as unknown)),
    });
  }

  /**
   * An allocation strategy given plain queues and group, whose picks are mapped back to the wire
   * queues (every member of a group sorts the same names, so the split is the one RocketMQ's makes).
   */
  plainStrategy<S extends AllocateStrategyLike>(strategy: S): S {
    if (!this.active) return strategy;
    return {
      getName: () => strategy.getName(),
      allocate: (group, cid, mqAll, cidAll) => {
        const wire = mqAll ?? [];
        const plain = wire.map((q) => this.unwrapQueue(q));
        const picked = strategy.allocate(this.unwrap(group), cid, mqAll ? plain : mqAll, cidAll);
        return picked.map((q) => wire[plain.indexOf(q)] ?? this.wrapQueue(q));
      },
    } as S;
  }

  /** `text` (an error message) with this namespace's `ns%` removed from every name in it. */
  unwrapText(text: string): string {
    return this.active && text.includes(this.#textHead) ? text.split(this.#textHead).join('') : text;
  }

  /** Rewrites an error's message to the plain names, in place (the error is the client's own). */
  unwrapError<E>(err: E): E {
    if (this.active && err instanceof Error) {
      const message = this.unwrapText(err.message);
      if (message !== err.message) {
        err.message = message;
        if (err.stack) err.stack = this.unwrapText(err.stack);
      }
    }
    return err;
  }

  /**
   * An event payload as the caller sees it: plain objects and arrays are copied with every `topic`
   * and group field unwrapped (a MessageQueue, a message, lists of them), errors get plain names.
   */
  unwrapPayload<T>(value: T, depth = 0): T {
    if (!this.active || depth > 4) return value;
    if (value instanceof Error) return this.unwrapError(value);
    if (Array.isArray(value)) return value.map((v: unknown) => this.unwrapPayload(v, depth + 1)) as T;
    if (!isPlainObject(value)) return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      out[k] = NAME_KEYS.has(k) && typeof v === 'string' ? this.unwrap(v) : this.unwrapPayload(v, depth + 1);
    return out as T;
  }

  /** `queues` on the wire, for an argument that may not be an array (the caller's checks refuse it). */
  wrapQueues<Q extends readonly MessageQueue[] | undefined>(queues: Q): Q {
    if (!this.active || !Array.isArray(queues)) return queues;
    return queues.map((q: MessageQueue) => this.wrapQueue(q)) as unknown as Q;
  }

  /** An async iterator handing out `fn(value)` for each value of `it`; `return` and `throw` pass through. */
  mapIterator<T, U>(it: AsyncIterableIterator<T>, fn: (value: T) => U): AsyncIterableIterator<U> {
    if (!this.active) return it as unknown as AsyncIterableIterator<U>;
    const map = (r: IteratorResult<T>): IteratorResult<U> => (r.done ? r : { done: false, value: fn(r.value) });
    const mapped: AsyncIterableIterator<U> = {
      next: async () => map(await it.next()),
      return: async (value?: unknown) =>
        it.return ? map(await it.return(value as T)) : { done: true, value: undefined as U },
      throw: async (err?: unknown) => {
        if (!it.throw) throw err;
        return map(await it.throw(err));
      },
      [Symbol.asyncIterator]: () => mapped,
    };
    return mapped;
  }

  /**
   * Runs `fn`, giving any error it throws the plain names. Without a namespace it is `fn()` itself, so
   * a client's promise is the one its internals return (idempotent calls keep returning the same one).
   */
  guard<T>(fn: () => Promise<T>): Promise<T> {
    return this.active ? this.#guarded(fn) : fn();
  }

  async #guarded<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw this.unwrapError(err);
    }
  }
}

/**
 * Makes `emitter` hand its listeners payloads with plain names (`unwrapPayload`), whoever emits: the
 * client's internals emit with wire names.
 */
export function unwrapEvents<
  E extends { emit(event: never, ...args: never[]): boolean; listenerCount(event: never): number },
>(emitter: E, names: NameMapper): E {
  if (!names.active) return emitter;
  const emit = emitter.emit.bind(emitter) as (event: unknown, ...args: unknown[]) => boolean;
  const count = emitter.listenerCount.bind(emitter) as (event: unknown) => number;
  // Payloads are copied only when someone listens: frequent events cost nothing otherwise.
  (emitter as unknown as { emit: (event: unknown, ...args: unknown[]) => boolean }).emit = (event, ...args) =>
    count(event) > 0 && emit(event, ...args.map((a) => names.unwrapPayload(a)));
  return emitter;
}

/** The mapper of a client without a namespace. */
export const NO_NAMESPACE = new NameMapper(undefined);
