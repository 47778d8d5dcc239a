/**
 * The client's shared machinery, one per process and client id (RocketMQ: MQClientInstance in
 * `impl.factory`, MQClientAPIImpl, ClientRemotingProcessor): the route table, heartbeats and timers,
 * the typed client API over the RemotingClient interface, client options and start-up, and the
 * requests brokers send to clients. Every other client room builds on it; it imports none of them.
 *
 * This file lists what the room offers the package's entry point; the room's files import each
 * other directly, never through it.
 */
export { DEFAULT_CLIENT_OPTIONS, type ClientOptions, type ResolvedClientOptions } from './client-options.js';
export { SendStatus, type BoundaryType } from './mq-client-api.js';
export type { SafeEventEmitter } from './safe-emitter.js';
export type { ConnectionErrorEvent } from './connection-errors.js';
export type { ClientEventListen, ClientEventUnlisten } from './event-methods.js';
