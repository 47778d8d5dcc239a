/**
 * The memory of pull answers, given back as soon as every message of an answer has been consumed,
 * instead of whenever the garbage collector gets to it.
 *
 * Why: the bodies of a pull's messages are views of one buffer holding the whole answer (one allocation
 * per pull, not per message). With a slow listener those messages wait in the ProcessQueue for seconds,
 * so they and the answer outlive the young-generation collections and are freed only by a full
 * collection, which V8 starts late (after tens of MiB of such buffers). A consumer working through a
 * large backlog then carries tens of MiB of answers it no longer needs. Anything hung on such a
 * long-lived message later (a copied body, say) lives as long, whether used or not.
 *
 * How: the push and lite consumers decode each answer from a private copy in memory of its own
 * (`ownAnswer`), and `trackAnswer` counts the kept messages whose bodies are views of it. The
 * application never gets those messages themselves: `handOut` gives it shallow copies whose bodies are
 * copies too, new objects that die young once the application drops them. When the ProcessQueue lets
 * go of the last message of an answer (`releaseMessage`: consumed, committed), the answer's memory is
 * detached, and freed at the next young collection. A message never handed out or never released
 * (its queue dropped, its offset pulled twice) keeps its answer to the collector, as before.
 */
import type { MessageExt } from '../common/message.js';

/** An answer still viewed by messages the ProcessQueue holds. */
interface Answer {
  pending: number;
}

const answers = new WeakMap<ArrayBufferLike, Answer>();

/** A copy of a pull body in an allocation of its own (never Node's shared pool): the one that may be freed early. */
export function ownAnswer(body: Buffer): Buffer {
  const own = Buffer.allocUnsafeSlow(body.length);
  own.set(body);
  return own;
}

/** Counts the kept messages whose bodies are views of `own` (from `ownAnswer`); the rest of it is unused. */
export function trackAnswer(own: Buffer, kept: readonly MessageExt[]): void {
  const memory = own.buffer;
  let pending = 0;
  for (const m of kept) if (m.body !== null && m.body.buffer === memory) pending++;
  if (pending > 0) answers.set(memory, { pending });
}

/**
 * What the application gets for `msgs`: each message whose body is a view of a tracked answer as a
 * shallow copy with a body of its own (one allocation for the batch); others as they are.
 */
export function handOut(msgs: readonly MessageExt[]): MessageExt[] {
  let total = 0;
  for (const m of msgs) if (m.body !== null && answers.has(m.body.buffer)) total += m.body.length;
  if (total === 0) return msgs.slice();
  const copy = Buffer.allocUnsafe(total);
  let at = 0;
  const out: MessageExt[] = [];
  for (const m of msgs) {
    const body = m.body;
    if (body === null || !answers.has(body.buffer)) {
      out.push(m);
      continue;
    }
    copy.set(body, at);
    out.push({ ...m, body: copy.subarray(at, at + body.length) });
    at += body.length;
  }
  return out;
}

/**
 * The ProcessQueue no longer holds `msg`: once no held message views its answer, the answer's memory
 * is detached (moved to a new, unreferenced owner, which the next young collection frees; the old
 * owner has long reached the old generation and would wait for a full collection).
 */
export function releaseMessage(msg: MessageExt): void {
  const body = msg.body;
  if (body === null) return;
  const memory = body.buffer;
  const answer = answers.get(memory);
  if (answer === undefined || --answer.pending > 0) return;
  answers.delete(memory);
  structuredClone(memory, { transfer: [memory as ArrayBuffer] });
}

/** `msg` will never be released (its offset was put twice): its answer is left to the collector. */
export function pinMessage(msg: MessageExt): void {
  if (msg.body !== null) answers.delete(msg.body.buffer);
}
