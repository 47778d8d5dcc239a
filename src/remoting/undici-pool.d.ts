/**
 * The type of undici's connection pool module, which HttpRemotingClient loads on its own (undici's
 * package index also loads fetch, WebSocket, cache and mock support that the client never uses).
 */
declare module 'undici/lib/dispatcher/pool.js' {
  import { Pool } from 'undici';
  export default Pool;
}
