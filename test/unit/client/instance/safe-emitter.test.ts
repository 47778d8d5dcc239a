import { SafeEventEmitter } from '../../../../src/client/instance/safe-emitter.js';
import { flush } from '../../../support/manual-clock.js';

type Events = { tick: [n: number] };

test('a listener that throws is reported and the other listeners still run', () => {
  const errors: unknown[] = [];
  const e = new SafeEventEmitter<Events>((err) => errors.push(err));
  const seen: number[] = [];
  e.on('tick', () => {
    throw new Error('bad listener');
  });
  e.on('tick', (n) => seen.push(n));
  expect(() => e.emit('tick', 1)).not.toThrow();
  expect(seen).toEqual([1]);
  expect(errors).toHaveLength(1);
});

test('a rejected promise from an async listener is reported, not unhandled', async () => {
  const errors: unknown[] = [];
  const e = new SafeEventEmitter<Events>((err) => errors.push(err));
  e.on('tick', async () => {
    throw new Error('async bad');
  });
  e.emit('tick', 1);
  await flush();
  expect(errors).toHaveLength(1);
});

test('once listeners run once; off removes; emit returns whether anyone listened', () => {
  const e = new SafeEventEmitter<Events>();
  const seen: number[] = [];
  const f = (n: number): void => {
    seen.push(n);
  };
  e.once('tick', f);
  e.emit('tick', 1);
  e.emit('tick', 2);
  expect(seen).toEqual([1]);
  e.on('tick', f);
  e.off('tick', f);
  expect(e.emit('tick', 3)).toBe(false);
  expect(seen).toEqual([1]);
});
