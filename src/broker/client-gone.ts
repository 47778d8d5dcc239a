/**
 * The client going away before its call is answered, as a held call needs to know it. In its own file
 * so that the processors' context and PullRequestHoldService can both name it without importing each
 * other.
 * @pure
 */

/**
 * Cheaper than an AbortSignal: a held pull per queue per consumer is the broker's most frequent call,
 * and an AbortController with an 'abort' listener per call kept the request alive across
 * young-generation collections.
 */
export interface ClientGone {
  /** True once the client closed the call before it was answered. */
  readonly gone: boolean;
  /** Calls `listener` once when the client goes away; returns the function that cancels it. */
  onGone(listener: () => void): () => void;
}
