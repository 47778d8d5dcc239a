/**
 * The default `openTelemetry: true` uses the global providers only when an OpenTelemetry SDK has
 * registered them: without a registration the API is not imported and the client has no telemetry.
 */
import { context, ROOT_CONTEXT, type ContextManager } from '@opentelemetry/api';
import { ProducerTelemetry } from '../../../../src/client/telemetry/producer-telemetry.js';
import { otelGlobalsRegistered } from '../../../../src/client/telemetry/otel-api.js';
import { silentLogger } from '../../../../src/common/logger.js';

/** The smallest context manager: enough for the API to register a global. */
const manager: ContextManager = {
  active: () => ROOT_CONTEXT,
  with: (_ctx, fn, thisArg, ...args) => fn.call(thisArg, ...args),
  bind: (_ctx, target) => target,
  enable() {
    return this;
  },
  disable() {
    return this;
  },
};

test('openTelemetry true: off until a global is registered, on once one is; false stays off', async () => {
  // Importing the API registers nothing by itself.
  expect(otelGlobalsRegistered()).toBe(false);
  const before = new ProducerTelemetry(silentLogger, true, 'pg');
  await before.start('client-a');
  expect(before.enabled).toBe(false);

  context.setGlobalContextManager(manager);
  try {
    expect(otelGlobalsRegistered()).toBe(true);
    const after = new ProducerTelemetry(silentLogger, true, 'pg');
    await after.start('client-b');
    expect(after.enabled).toBe(true);
    const off = new ProducerTelemetry(silentLogger, false, 'pg');
    await off.start('client-c');
    expect(off.enabled).toBe(false);
  } finally {
    context.disable();
  }
});
