/**
 * What a consumer's `start()` waits for before it says it runs: the route of every subscribed topic
 * fetched, every broker of those routes willing to serve the subscriptions that are not tag
 * expressions (RocketMQ's CHECK_CLIENT_CONFIG), and the heartbeat accepted by each of them. A broker
 * that cannot be reached is tried again (after 100 ms, doubling up to 1 s) until `startTimeoutMs`;
 * then the start fails with a retriable `StartTimeoutError` naming what could not be reached (the
 * NameServers, or the broker's name and address) and the last failure.
 * A refusal that waiting cannot change (a SQL92 subscription the broker cannot serve, a wrong access
 * token, the broker's ACL refusing the account or the group) fails the start at once.
 */
import { delay, type Clock, type TimerHandle } from '../../common/clock.js';
import {
  AclAccessDeniedError,
  InvalidArgumentError,
  RocketMQError,
  StartTimeoutError,
  StateError,
} from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { describeFailure, nameAddresses } from './connection-errors.js';
import { AddressedFailure, MASTER_ID, type MQClientInstance } from './mq-client-instance.js';
import type { SubscriptionDataLike } from './mq-consumer-inner.js';

export interface ReachBrokersOptions {
  instance: MQClientInstance;
  /** `PushConsumer`, `LitePullConsumer`: names the client in errors. */
  what: string;
  group: string;
  /** The subscriptions at the time of the call (the retry topic included). */
  subscriptions: () => readonly SubscriptionDataLike[];
  startTimeoutMs: number;
  clock: Clock;
  logger: Logger;
  /** Aborted when the client is shut down during its start. */
  signal: AbortSignal;
}

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 1000;

/** A failure worth waiting out: the broker could not be reached, or answered "try later". */
function retriable(err: unknown): boolean {
  const e = err instanceof AddressedFailure ? err.error : err;
  // A broker that answered a subscription check with an error code has decided: waiting won't change it.
  if (err instanceof AddressedFailure && err.topic !== undefined && e instanceof RocketMQError)
    return (e.responseCode === undefined || e.responseCode < 0) && e.retriable;
  return e instanceof RocketMQError && e.retriable;
}

function message(err: unknown): string {
  return describeFailure(err instanceof AddressedFailure ? err.error : err);
}

/** What a start that ended on `lastErr` could not reach: for the message, and the address(es) alone. */
function unreached(o: ReachBrokersOptions, lastErr: unknown): { what: string; address: string } {
  if (lastErr instanceof AddressedFailure) {
    const name = brokerNameOf(o, lastErr.addr);
    return {
      what: `broker ${name === undefined ? '' : `${name} (`}${lastErr.addr}${name === undefined ? '' : ')'}`,
      address: lastErr.addr,
    };
  }
  // The routes could not be fetched: from the NameServers, or from the endpoints (the brokers themselves).
  const { namesrvAddr, endpoints } = o.instance.options;
  const addrs = namesrvAddr.length > 0 ? namesrvAddr : endpoints;
  return { what: nameAddresses(namesrvAddr.length > 0 ? 'NameServer' : 'broker', addrs), address: addrs.join(', ') };
}

/** The name of the broker at `addr`, from the routes of the subscribed topics. */
function brokerNameOf(o: ReachBrokersOptions, addr: string): string | undefined {
  for (const sd of o.subscriptions()) {
    const route = o.instance.getTopicRouteData(sd.topic);
    const bd = route?.brokerDatas.find((b) => Object.values(b.brokerAddrs).includes(addr));
    if (bd) return bd.brokerName;
  }
  return undefined;
}

/** Resolves once the brokers of the subscriptions know this client; see the file comment. */
export async function reachBrokers(o: ReachBrokersOptions): Promise<void> {
  const deadline = o.clock.now() + o.startTimeoutMs;
  let wait = FIRST_RETRY_MS;
  let lastErr: unknown;
  for (;;) {
    if (o.signal.aborted) throw new StateError(`the ${o.what} was shut down while starting`);
    try {
      await withDeadline(attempt(o), deadline, o.clock, o.signal);
      return;
    } catch (err) {
      if (err === DEADLINE) break;
      if (o.signal.aborted) throw new StateError(`the ${o.what} was shut down while starting`);
      if (!retriable(err)) throw refusal(o, err);
      lastErr = err;
      o.logger.debug({ err }, `${o.what} start: broker not reachable yet, trying again`);
    }
    const left = deadline - o.clock.now();
    if (left <= 0) break;
    await delay(Math.min(wait, left), o.signal, o.clock).catch(() => undefined);
    wait = Math.min(wait * 2, MAX_RETRY_MS);
  }
  const { what, address } = unreached(o, lastErr);
  const cause = lastErr instanceof AddressedFailure ? lastErr.error : lastErr;
  throw new StartTimeoutError(
    `${o.what} ${o.group} could not reach its ${what} within ${o.startTimeoutMs} ms` +
      (lastErr === undefined ? '' : `: ${message(lastErr)}`),
    address,
    { cause },
  );
}

/** A failure that waiting cannot change, as the error the caller sees. */
function refusal(o: ReachBrokersOptions, err: unknown): unknown {
  if (!(err instanceof AddressedFailure)) return err;
  // An ACL refusal says itself who was refused and what: it is not the subscription's fault.
  if (err.error instanceof AclAccessDeniedError) return err.error;
  if (err.topic !== undefined)
    return new InvalidArgumentError(
      'subscription',
      `the broker ${err.addr} can not serve the subscription of ${err.topic}: ${message(err)}`,
      { cause: err.error },
    );
  return err.error;
}

async function attempt(o: ReachBrokersOptions): Promise<void> {
  const inst = o.instance;
  const topics = [...new Set(o.subscriptions().map((sd) => sd.topic))];
  const routes = await Promise.all(topics.map((t) => inst.updateTopicRouteInfo(t)));
  const addrs = new Set<string>();
  routes.forEach((route) => {
    if (!route) return;
    for (const bd of route.brokerDatas) {
      const a = bd.brokerAddrs[String(MASTER_ID)];
      if (a !== undefined) addrs.add(a);
    }
  });
  const brokers = [...addrs];
  await inst.checkClientInBroker(o.group, o.subscriptions(), brokers);
  await inst.heartbeatOrThrow(brokers);
  // The heartbeat creates the retry topic on the broker: fetch the routes still missing.
  const missing = topics.filter((_, i) => !routes[i]);
  const late = await Promise.all(missing.map((t) => inst.updateTopicRouteInfo(t)));
  missing.forEach((topic, i) => {
    if (!late[i]) o.logger.warn({ topic, group: o.group }, 'subscribed topic does not exist (yet)');
  });
}

const DEADLINE = Symbol('deadline');

/** `p`, or a rejection with DEADLINE once the clock passes `deadline` (p then runs on, ignored). */
function withDeadline<T>(p: Promise<T>, deadline: number, clock: Clock, signal: AbortSignal): Promise<T> {
  let timer: TimerHandle | undefined;
  let onAbort: (() => void) | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = clock.setTimeout(() => reject(DEADLINE), Math.max(0, deadline - clock.now()));
    onAbort = () => reject(new StateError('shut down while starting'));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  p.catch(() => undefined);
  return Promise.race([p, bound]).finally(() => {
    if (timer !== undefined) clock.clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  });
}
