/**
 * The one transport interface of the client side: invoke a command on a broker
 * address and get its answer. Everything above it (MQClientAPI, MQClientInstance, the consumers and
 * the producer) speaks commands, never bytes or sockets; a second transport (RocketMQ's TCP remoting
 * frames) implements the same interface.
 * @pure
 */
import type { RemotingRequest, RemotingResponse } from '../protocol/command.js';

export interface InvokeOptions {
  /**
   * How long the whole call may take, ms (connect, send, the broker's hold, the answer). For a held
   * pull this must exceed the broker's suspend time, so the broker always answers first.
   */
  timeoutMs: number;
  /** Aborts the call; the promise then rejects with an `AbortError` (code `ERR_ABORTED`). */
  signal?: AbortSignal | undefined;
}

/**
 * Serves one request a broker sent to the client over the transport (RocketMQ's client-side requests:
 * NOTIFY_CONSUMER_IDS_CHANGED, GET_CONSUMER_RUNNING_INFO, ...); resolves with the answer, or
 * `undefined` to send none.
 */
export type ServerRequestProcessor = (request: RemotingRequest, addr: string) => Promise<RemotingResponse | undefined>;

export interface RemotingClient {
  /**
   * Sends `request` to the broker at `addr` (for HTTP: its base URL) and resolves with the answer,
   * whatever its response code. Rejects with a `TransportError` (retriable) when the broker cannot be
   * reached or the call times out, an `AbortError` when `signal` aborts, and a `RequestRejectedError`
   * when the broker refuses the request itself (malformed, unauthorized). The answer's `body` is the
   * caller's: the transport never reuses or changes it afterwards (the pull path decodes views of it).
   */
  invoke(addr: string, request: RemotingRequest, opts: InvokeOptions): Promise<RemotingResponse>;
  /**
   * Fire and forget (RocketMQ's oneway): the request is sent, the answer and any failure are ignored.
   * Over HTTP the call still completes in the background; `close()` waits for it. The promise (which
   * never rejects) settles once the transport is done with the request: over TCP when it is written,
   * after which no later request on the connection can overtake it; over HTTP when it is answered or
   * failed, since a later request may travel on another connection. A caller whose next request must
   * follow this one (a final offset after periodic ones) waits for it; others ignore it.
   */
  invokeOneway(addr: string, request: RemotingRequest, opts: InvokeOptions): Promise<void>;
  /**
   * Held calls (pulls, membership watches) to the broker at `addr` not yet written to a connection.
   * Offered by transports that may queue a call before they send it on a connection of its own (HTTP);
   * a consumer's `ready` waits for 0 before its last probe. Absent where calls to one broker share one
   * ordered connection (TCP).
   */
  unsentHeldCalls?(addr: string): number;
  /**
   * Serves the requests with `code` that brokers send over this transport's connections with
   * `processor` (one per code; a later registration replaces it), as RocketMQ's
   * `RemotingClient.registerProcessor` does; returns the function that removes it. Offered by
   * transports whose connections carry requests both ways (TCP); absent where a broker cannot call the
   * client (HTTP).
   */
  registerProcessor?(code: number, processor: ServerRequestProcessor): () => void;
  /** Closes every connection: waits for calls in flight up to a deadline, then aborts them. Idempotent. */
  close(): Promise<void>;
}
