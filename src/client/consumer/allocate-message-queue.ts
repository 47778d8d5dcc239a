/**
 * Queue allocation strategies (RocketMQ's AllocateMessageQueueAveragely, ...ByCircle and
 * ...ConsistentHash). Pure functions of their inputs: they never sort (RebalanceImpl sorts queues
 * with `compareMessageQueue` and client ids in UTF-16 order before calling), and they give exactly
 * RocketMQ's results, edge cases included (vectors/allocate.json):
 * - checks in order: currentCID empty, mqAll empty, cidAll empty → IllegalArgumentError with
 *   RocketMQ's message; `null`/`undefined` count as Java's null;
 * - a currentCID missing from cidAll gets `[]` (RocketMQ logs `[BUG]`), not an error;
 * - a duplicated cid takes the position of its first occurrence (`indexOf`), so the later
 *   position's queues go to nobody.
 * @pure
 */
import { InvalidArgumentError } from '../../common/errors.js';
import type { MessageQueue } from '../../common/message.js';
import { md5 } from '../../common/md5.js';
import { javaUtf8Encode } from '../../common/codec/java-string.js';

/** What RebalanceImpl calls; users may pass their own object with this shape. */
export interface AllocateMessageQueueStrategy {
  allocate(
    consumerGroup: string,
    currentCID: string | null | undefined,
    mqAll: readonly MessageQueue[] | null | undefined,
    cidAll: readonly (string | null)[] | null | undefined,
  ): MessageQueue[];
  getName(): string;
}

/**
 * RocketMQ's IllegalArgumentException from the allocation checks. `message` is exactly RocketMQ's
 * text (`currentCID is empty`, ...); `code` is `ERR_INVALID_ARGUMENT`.
 */
export class IllegalArgumentError extends InvalidArgumentError {
  constructor(field: string, message: string) {
    super(field, message);
    this.message = message;
  }
}

/** The consumer ids a strategy is given (RocketMQ passes a List<String> that may hold null). */
type CidList = readonly (string | null)[];

/**
 * RocketMQ: AbstractAllocateMessageQueueStrategy.check — throws on empty inputs, returns false when
 * currentCID is not among cidAll.
 */
function check(
  currentCID: string | null | undefined,
  mqAll: readonly MessageQueue[] | null | undefined,
  cidAll: CidList | null | undefined,
): currentCID is string {
  if (currentCID === null || currentCID === undefined || currentCID.length < 1) {
    throw new IllegalArgumentError('currentCID', 'currentCID is empty');
  }
  if (mqAll === null || mqAll === undefined || mqAll.length === 0) {
    throw new IllegalArgumentError('mqAll', 'mqAll is null or mqAll empty');
  }
  if (cidAll === null || cidAll === undefined || cidAll.length === 0) {
    throw new IllegalArgumentError('cidAll', 'cidAll is null or cidAll empty');
  }
  return cidAll.includes(currentCID);
}

/**
 * RocketMQ: AbstractAllocateMessageQueueStrategy — `allocate` runs `check` first; a strategy only
 * says how the checked inputs are divided.
 */
abstract class AbstractAllocateMessageQueueStrategy implements AllocateMessageQueueStrategy {
  allocate(
    _consumerGroup: string,
    currentCID: string | null | undefined,
    mqAll: readonly MessageQueue[] | null | undefined,
    cidAll: readonly (string | null)[] | null | undefined,
  ): MessageQueue[] {
    if (!check(currentCID, mqAll, cidAll) || !mqAll || !cidAll) return [];
    return this.allocateChecked(currentCID, mqAll, cidAll);
  }

  /**
   * `currentCID` is in `cidAll`, and neither list is empty.
   * @internal
   */
  protected abstract allocateChecked(
    currentCID: string,
    mqAll: readonly MessageQueue[],
    cidAll: CidList,
  ): MessageQueue[];

  abstract getName(): string;
}

/** RocketMQ: AVG — each consumer a contiguous block; the first `n % c` consumers get one more. */
export class AllocateMessageQueueAveragely extends AbstractAllocateMessageQueueStrategy {
  /** @internal */
  protected allocateChecked(currentCID: string, mqAll: readonly MessageQueue[], cidAll: CidList): MessageQueue[] {
    const index = cidAll.indexOf(currentCID);
    const n = mqAll.length;
    const c = cidAll.length;
    const mod = n % c;
    const averageSize = n <= c ? 1 : mod > 0 && index < mod ? Math.trunc(n / c) + 1 : Math.trunc(n / c);
    const startIndex = mod > 0 && index < mod ? index * averageSize : index * averageSize + mod;
    const range = Math.min(averageSize, n - startIndex);
    const result: MessageQueue[] = [];
    for (let i = 0; i < range; i++) result.push(mqAll[(startIndex + i) % n] as MessageQueue);
    return result;
  }

  getName(): string {
    return 'AVG';
  }
}

/** RocketMQ: AVG_BY_CIRCLE — round robin: positions index, index + c, index + 2c, ... */
export class AllocateMessageQueueAveragelyByCircle extends AbstractAllocateMessageQueueStrategy {
  /** @internal */
  protected allocateChecked(currentCID: string, mqAll: readonly MessageQueue[], cidAll: CidList): MessageQueue[] {
    const index = cidAll.indexOf(currentCID);
    const result: MessageQueue[] = [];
    for (let i = index; i < mqAll.length; i++) {
      if (i % cidAll.length === index) result.push(mqAll[i] as MessageQueue);
    }
    return result;
  }

  getName(): string {
    return 'AVG_BY_CIRCLE';
  }
}

/**
 * RocketMQ's ConsistentHashRouter default hash: the first 4 bytes of MD5 over the key's (Java)
 * UTF-8 bytes, big-endian, as an unsigned 32-bit number.
 */
export function consistentHashMd5(key: string): number {
  const d = md5(javaUtf8Encode(key));
  return (((d[0] as number) << 24) | ((d[1] as number) << 16) | ((d[2] as number) << 8) | (d[3] as number)) >>> 0;
}

/** Java's `MessageQueue.toString()`, the key a queue is hashed by. */
export const messageQueueToString = (mq: MessageQueue): string =>
  `MessageQueue [topic=${mq.topic}, brokerName=${mq.brokerName}, queueId=${mq.queueId}]`;

/**
 * RocketMQ: CONSISTENT_HASH — every cid gets `virtualNodeCnt` ring positions `hash("<cid>-<i>")`;
 * a repeated cid continues the numbering from the replicas it already has on the ring; an equal
 * position is overwritten by the later node (TreeMap.put). A queue goes to the first position at or
 * above `hash(mq.toString())`, wrapping to the lowest. Results keep mqAll order.
 */
export class AllocateMessageQueueConsistentHash extends AbstractAllocateMessageQueueStrategy {
  readonly virtualNodeCnt: number;

  constructor(virtualNodeCnt = 10) {
    super();
    if (!Number.isInteger(virtualNodeCnt) || virtualNodeCnt < 0) {
      throw new IllegalArgumentError('virtualNodeCnt', `illegal virtualNodeCnt :${virtualNodeCnt}`);
    }
    this.virtualNodeCnt = virtualNodeCnt;
  }

  /** @internal */
  protected allocateChecked(currentCID: string, mqAll: readonly MessageQueue[], cidAll: CidList): MessageQueue[] {
    const ring = buildRing(cidAll, this.virtualNodeCnt);
    const result: MessageQueue[] = [];
    for (const mq of mqAll) {
      if (mq === null || mq === undefined) throw new IllegalArgumentError('mqAll', 'mqAll contains null');
      const owner = ring.route(consistentHashMd5(messageQueueToString(mq)));
      if (owner !== undefined && owner === currentCID) result.push(mq);
    }
    return result;
  }

  getName(): string {
    return 'CONSISTENT_HASH';
  }
}

interface Ring {
  /** The physical node (cid) owning `hash`, or undefined for an empty ring. */
  route(hash: number): string | null | undefined;
}

function buildRing(cidAll: readonly (string | null)[], vNodeCount: number): Ring {
  const nodes = new Map<number, string | null>();
  for (const cid of cidAll) {
    // RocketMQ: getExistingReplicas counts the ring entries (after overwrites) of this cid.
    let existing = 0;
    for (const owner of nodes.values()) {
      // Java calls owner.equals(cid): a null owner throws a NullPointerException.
      if (owner === null) throw new IllegalArgumentError('cidAll', 'cidAll contains null');
      if (owner === cid) existing++;
    }
    for (let i = 0; i < vNodeCount; i++) nodes.set(consistentHashMd5(`${String(cid)}-${i + existing}`), cid);
  }
  const keys = [...nodes.keys()].sort((a, b) => a - b);
  return {
    route(hash: number) {
      if (keys.length === 0) return undefined;
      let lo = 0;
      let hi = keys.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((keys[mid] as number) < hash) lo = mid + 1;
        else hi = mid;
      }
      return nodes.get(keys[lo < keys.length ? lo : 0] as number);
    },
  };
}
