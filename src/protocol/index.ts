/**
 * The protocol: request and response codes with RocketMQ's numbers, PullSysFlag, the command model,
 * the HTTP framing, and one zod schema per command header. Shared by client and broker.
 * @pure
 */
export * from './request-code.js';
export * from './response-code.js';
export * from './pull-sys-flag.js';
export * from './command.js';
export * from './frame.js';
export * from './define.js';
export * from './commands/index.js';
export * from './response-error.js';
export * from './admin-body-json.js';
