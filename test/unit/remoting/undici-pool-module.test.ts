/**
 * HttpRemotingClient loads undici's connection pool module on its own (undici/lib/dispatcher/pool.js)
 * rather than undici's index. This pins that the installed undici still has the module at that path and
 * that it is the same `Pool` class undici exports, so an undici upgrade that moves it shows here (the client
then falls back to undici's public entry point, at the memory cost this module path avoids).
 */
import { Pool } from 'undici';

test("undici/lib/dispatcher/pool.js is undici's Pool", async () => {
  const m = await import('undici/lib/dispatcher/pool.js');
  expect(m.default).toBe(Pool);
});
