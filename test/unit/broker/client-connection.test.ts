import { ClientConnection } from '../../../src/broker/client-connection.js';

describe('ClientConnection (both listeners)', () => {
  test('listeners run once when the client goes away; a removed one does not', () => {
    const c = new ClientConnection('127.0.0.1:1');
    const calls: string[] = [];
    c.onGone(() => calls.push('a'));
    const off = c.onGone(() => calls.push('b'));
    off();
    c.markGone();
    c.markGone();
    expect(calls).toEqual(['a']);
    expect(c.gone).toBe(true);
    expect(c.signal.aborted).toBe(true);
  });

  test('a listener registered after the client went away still runs, so a late waiter is released', async () => {
    const c = new ClientConnection('127.0.0.1:1');
    c.markGone();
    const ran = await new Promise<boolean>((resolve) => {
      c.onGone(() => resolve(true));
      setTimeout(() => resolve(false), 1000).unref();
    });
    expect(ran).toBe(true);
  });
});
