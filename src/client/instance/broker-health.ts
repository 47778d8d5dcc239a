/**
 * Which brokers a client instance can reach, learnt from the outcome of every call it makes: an answer
 * (whatever its response code) means reachable; a transport failure (refused, reset, timed out) means
 * not. A broker's first answer and every recovery emit `connected`; the first failure after an answer
 * emits `disconnected`; a broker unreachable for longer than `warnAfterMs` is logged as a warning once
 * per outage, so that a consumer whose broker went away is not silent by default. An address that has
 * never answered is warned about at its first failure, and every failure of it goes to `notReachedYet`:
 * a NameServer or broker that is not there shows in the first second of a start, not at its timeout.
 * @pure
 */
import type { Clock } from '../../common/clock.js';
import { RocketMQError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import type { RemotingRequest, RemotingResponse } from '../../protocol/command.js';
import type { InvokeOptions, RemotingClient } from '../../remoting/remoting-client.js';

interface BrokerState {
  reachable: boolean;
  /** It answered at least once. */
  answeredOnce: boolean;
  /** When the current outage began (clock ms); undefined while reachable. */
  downSince: number | undefined;
  warned: boolean;
  lastError: unknown;
}

export interface BrokerHealthHooks {
  connected(addr: string): void;
  disconnected(addr: string, error: unknown): void;
  /** A call to an address that has never answered could not reach it (every such failure). */
  notReachedYet(addr: string, error: unknown): void;
}

/** A failure that says the broker could not be reached (not a refusal or a protocol answer). */
export function isUnreachable(err: unknown): boolean {
  return err instanceof RocketMQError && (err.code === 'ERR_TRANSPORT' || err.code === 'ERR_TIMEOUT');
}

export class BrokerHealth {
  readonly #brokers = new Map<string, BrokerState>();

  constructor(
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly warnAfterMs: number,
    private readonly hooks: BrokerHealthHooks,
  ) {}

  #state(addr: string): BrokerState {
    let s = this.#brokers.get(addr);
    if (!s) {
      s = { reachable: false, answeredOnce: false, downSince: undefined, warned: false, lastError: undefined };
      this.#brokers.set(addr, s);
    }
    return s;
  }

  /** The broker answered a call. */
  answered(addr: string): void {
    const s = this.#state(addr);
    if (s.reachable) return;
    if (s.warned) this.logger.info({ addr }, 'broker reachable again');
    s.reachable = true;
    s.answeredOnce = true;
    s.downSince = undefined;
    s.warned = false;
    s.lastError = undefined;
    this.hooks.connected(addr);
  }

  /** A call to the broker failed with `err`; only transport failures count. */
  failed(addr: string, err: unknown): void {
    if (!isUnreachable(err)) return;
    const s = this.#state(addr);
    const now = this.clock.now();
    s.lastError = err;
    if (s.reachable) {
      s.reachable = false;
      s.downSince = now;
      this.hooks.disconnected(addr, err);
    } else {
      s.downSince ??= now;
    }
    if (!s.answeredOnce) {
      if (!s.warned) {
        s.warned = true;
        this.logger.warn({ addr, err }, 'cannot connect (this address has not answered yet)');
      }
      this.hooks.notReachedYet(addr, err);
      return;
    }
    const downMs = now - s.downSince;
    if (!s.warned && downMs >= this.warnAfterMs) {
      s.warned = true;
      this.logger.warn({ addr, downMs, err }, 'broker unreachable');
    }
  }

  /** Whether `addr` answered its last call. */
  isReachable(addr: string): boolean {
    return this.#brokers.get(addr)?.reachable ?? false;
  }

  /** The last transport failure seen for `addr`, while it is unreachable. */
  lastError(addr: string): unknown {
    return this.#brokers.get(addr)?.lastError;
  }
}

/** A RemotingClient that reports each call's outcome to a BrokerHealth; calls pass through unchanged. */
export class ObservedRemotingClient implements RemotingClient {
  constructor(
    private readonly inner: RemotingClient,
    private readonly health: BrokerHealth,
  ) {}

  invoke(addr: string, request: RemotingRequest, opts: InvokeOptions): Promise<RemotingResponse> {
    return this.inner.invoke(addr, request, opts).then(
      (res) => {
        this.health.answered(addr);
        return res;
      },
      (err: unknown) => {
        this.health.failed(addr, err);
        throw err;
      },
    );
  }

  invokeOneway(addr: string, request: RemotingRequest, opts: InvokeOptions): Promise<void> {
    return this.inner.invokeOneway(addr, request, opts);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
