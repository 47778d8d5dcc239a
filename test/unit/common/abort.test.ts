import { getEventListeners } from 'node:events';
import { onAbort } from '../../../src/common/abort.js';

describe('onAbort (one shared abort listener per signal)', () => {
  it('runs the callbacks still registered, once each, in registration order', () => {
    const ac = new AbortController();
    const calls: string[] = [];
    onAbort(ac.signal, () => calls.push('a'));
    const cancelB = onAbort(ac.signal, () => calls.push('b'));
    onAbort(ac.signal, () => calls.push('c'));
    cancelB();
    ac.abort();
    ac.abort();
    expect(calls).toEqual(['a', 'c']);
  });

  it('adds one listener to the signal however many calls use it, and none after they are cancelled', () => {
    const ac = new AbortController();
    const cancels = Array.from({ length: 100 }, () => onAbort(ac.signal, () => {}));
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
    for (const cancel of cancels) cancel();
    let ran = false;
    onAbort(ac.signal, () => (ran = true));
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
    ac.abort();
    expect(ran).toBe(true);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('calls back at once for a signal that has already aborted', () => {
    let ran = 0;
    const cancel = onAbort(AbortSignal.abort(), () => ran++);
    expect(ran).toBe(1);
    cancel();
    expect(ran).toBe(1);
  });

  it('keeps signals apart', () => {
    const a = new AbortController();
    const b = new AbortController();
    const calls: string[] = [];
    onAbort(a.signal, () => calls.push('a'));
    onAbort(b.signal, () => calls.push('b'));
    b.abort();
    expect(calls).toEqual(['b']);
    a.abort();
    expect(calls).toEqual(['b', 'a']);
  });
});
