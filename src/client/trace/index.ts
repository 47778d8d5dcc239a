/**
 * RocketMQ's message trace (RocketMQ: `client.trace`): the record format (TraceDataEncoder), the
 * background dispatcher that batches records into messages of the trace topic (AsyncTraceDispatcher),
 * and the hooks the send path, the consume services and the transaction producer call. Records leave
 * through the client instance's MQClientAPI, so every client room can trace without importing the
 * producer; the room imports only `client/instance` and the shared rooms below it.
 *
 * This file lists what the room offers the package's entry point; the room's files import each
 * other directly, never through it.
 */
export type { TraceStats } from './async-trace-dispatcher.js';
export type { TraceOptions } from './trace-options.js';
export {
  decodeTraceData,
  encodeTraceContext,
  DEFAULT_TRACE_TOPIC,
  type TraceBean,
  type TraceContext,
  type TraceType,
} from './trace-codec.js';
