/**
 * The broker's metrics endpoint: `GET /metrics` answers the Prometheus text exposition of the broker's
 * metrics (broker-metrics.ts), computed and rendered per scrape; anything else is 404 (405 for another method on
 * /metrics). It listens on its own port, 127.0.0.1 unless told otherwise, and closes with the broker.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../common/logger.js';
import { refreshConsumerLatencies, type ConsumerLatencySources } from './broker-metrics.js';

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** The broker as the endpoint sees it: the text of a scrape, and what the consumer latencies read. */
export interface MetricsSource extends ConsumerLatencySources {
  metricsText(): string;
}

export interface MetricsServer {
  readonly port: number;
  readonly host: string;
  /** `http://host:port`. */
  readonly address: string;
  close(): Promise<void>;
}

/**
 * Binds `metricsHost:metricsPort` (0 picks a free port), or nothing without a port; rejects with an error
 * naming the address when it cannot bind.
 */
export async function startMetricsServer(
  o: { metricsHost: string; metricsPort: number | undefined; logger: Logger },
  source: MetricsSource,
): Promise<MetricsServer | undefined> {
  const { metricsHost: host, metricsPort: port, logger } = o;
  if (port === undefined) return undefined;
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: the metrics are at /metrics\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
      return;
    }
    void answer(req.method, res);
  });
  /** Computes the figures that read the store, then renders; when they fail, the last ones are served. */
  async function answer(method: string | undefined, res: http.ServerResponse): Promise<void> {
    try {
      await refreshConsumerLatencies(source);
    } catch (err) {
      logger.warn({ err }, 'computing the broker metrics that read the store failed; the last figures are served');
    }
    let text: string;
    try {
      text = source.metricsText();
    } catch (err) {
      logger.error({ err }, 'rendering the broker metrics failed');
      res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n');
      return;
    }
    res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'content-length': Buffer.byteLength(text) });
    res.end(method === 'HEAD' ? undefined : text);
  }
  // A scrape is one short request: idle keep-alive sockets are not kept past a scrape interval.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void =>
      reject(new Error(`the metrics port could not be opened on ${host}:${port}: ${err.message}`, { cause: err }));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    port: bound,
    host,
    address: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
