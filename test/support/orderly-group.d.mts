export interface OrderlyGroupOptions {
  /** How the members and the producer reach the broker: HTTP endpoints, or TCP remoting through namesrvAddr. */
  transport?: 'http' | 'tcp';
  /** Keys sent with shardingKey (default 24). */
  keys?: number;
  /** At least this many messages per key sent during each step of a round (default 6; five steps a round). */
  perRound?: number;
  /** Rounds of join, join, leave, kill, join (default 1). */
  rounds?: number;
  /** Queues of the topic (default 4). */
  queues?: number;
  /** consumeMessageBatchMaxSize of the members (default 1). */
  batch?: number;
  /** Per-key mode with this concurrency; unset: per-queue mode. */
  keyConcurrency?: number;
}
export interface OrderlyGroupResult {
  sent: number;
  calls: number;
  deliveries: number;
  /** Deliveries of a message processed before (re-deliveries of a suffix after a kill or hand-over). */
  redelivered: number;
  /** Of those, the ones after a graceful hand-over (the queue's previous holder unlocked it before the grant). */
  redeliveredAfterHandover: number;
  /** One line per key re-delivered after a graceful hand-over: which sequences, by whom, from which offset. */
  handoverRedeliveries: string[];
  /** Messages a retried send stored twice (left out of the order check). */
  duplicateStores: number;
  lost: number;
  /** Locks the broker granted to a new holder. */
  grants: number;
  /** Listener calls during which at least one lock-table sample was taken. */
  sampledCalls: number;
  leaves: number;
  kills: number;
  members: number;
  mode: string;
  /** Every check that failed, in words; empty when the run was correct. */
  problems: string[];
}
export function runOrderlyGroupScenario(options?: OrderlyGroupOptions): Promise<OrderlyGroupResult>;
