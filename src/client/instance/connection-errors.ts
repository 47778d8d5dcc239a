/**
 * How a client reports that it could not reach a NameServer or a broker. The transports wrap what the
 * socket said in framing of their own (the call that failed, and for TCP the reconnect schedule: "next
 * attempt in 1120 ms"); that schedule is true when the transport throws and stale by the time a start
 * timeout or a failed send reports it, so the errors built here keep only the failure underneath and
 * name what could not be reached instead.
 * @pure
 */
import { TransportError } from '../../common/errors.js';

/**
 * The reason of a failure in a sentence: for a connection failure (`ERR_TRANSPORT`), what the socket
 * said (`connect ECONNREFUSED 127.0.0.1:9876`); otherwise the error's own message.
 */
export function describeFailure(err: unknown): string {
  let e = err;
  while (e instanceof TransportError && e.code === 'ERR_TRANSPORT' && hasMessage(e.cause)) e = e.cause;
  return hasMessage(e) ? e.message : String(e);
}

/** An Error, possibly of another realm (Node's socket errors are not `instanceof Error` inside a vm context). */
function hasMessage(e: unknown): e is { message: string } {
  return typeof e === 'object' && e !== null && typeof (e as { message?: unknown }).message === 'string';
}

/** `NameServer a` or `NameServers a, b`: what `addrs` are, for a message. */
export function nameAddresses(kind: 'NameServer' | 'broker', addrs: readonly string[]): string {
  return `${kind}${addrs.length > 1 ? 's' : ''} ${addrs.join(', ')}`;
}

/**
 * The error of a query that no address answered: a TransportError (ERR_TIMEOUT when the last failure
 * was a timeout) naming the addresses and each one's failure, its cause the last failure. Returns the
 * last failure unchanged when it is not a transport failure (an address that answered with an error
 * was reached).
 */
export function unreachableError(
  kind: 'NameServer' | 'broker',
  purpose: string,
  failures: ReadonlyArray<readonly [addr: string, err: unknown]>,
): unknown {
  const last = failures[failures.length - 1]?.[1];
  if (!(last instanceof TransportError)) return last;
  const addrs = failures.map(([a]) => a);
  const reasons =
    failures.length === 1 ? describeFailure(last) : failures.map(([a, e]) => `${a}: ${describeFailure(e)}`).join('; ');
  const target = addrs.length > 1 ? `any of the ${nameAddresses(kind, addrs)}` : `the ${nameAddresses(kind, addrs)}`;
  return new TransportError(`cannot reach ${target} ${purpose}: ${reasons}`, {
    cause: last,
    ...(last.responseCode === undefined ? {} : { responseCode: last.responseCode }),
  });
}

/** What `connectionError` carries: the address that could not be reached and the failure. */
export interface ConnectionErrorEvent {
  /** The NameServer or broker address (the HTTP base URL for the bundled broker). */
  address: string;
  /** The failure: connection refused or reset, a connect that timed out. */
  error: unknown;
}

/** A client that wants to hear about connection errors (the producers' and consumers' inner objects). */
export interface ConnectionErrorListener {
  connectionError?(event: ConnectionErrorEvent): void;
}

/**
 * Tells each client once per address that the address could not be reached, the first time it fails
 * before it ever answered: a start that retries, or sends that keep failing, report it once, not once
 * per attempt. A client registered later hears about it at the next failure.
 */
export class ConnectionErrorReporter {
  readonly #told = new Map<string, WeakSet<ConnectionErrorListener>>();

  constructor(private readonly clients: () => Iterable<ConnectionErrorListener>) {}

  /** A call to `addr`, which has not answered yet, could not reach it. */
  failed(addr: string, error: unknown): void {
    let told = this.#told.get(addr);
    if (!told) this.#told.set(addr, (told = new WeakSet()));
    for (const c of this.clients()) {
      if (!c.connectionError || told.has(c)) continue;
      told.add(c);
      c.connectionError({ address: addr, error });
    }
  }

  /** `addr` answered: its later outages are reported as disconnections instead. */
  answered(addr: string): void {
    this.#told.delete(addr);
  }
}
