/**
 * The dedicated diagnostics listener: Prometheus `/metrics` on its own port, so scrapers need no
 * access to the MCP port (and no MCP credentials). The default port falls back to a free one when
 * taken; a port the RunConfig names must be free.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { errorMessage, runtimeError } from '../util/errors.js';
import { DEFAULT_PROMETHEUS_PORT } from './settings.js';

export type MetricsHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

export async function listenForMetrics(
  host: string,
  port: number,
  handler: MetricsHandler,
  logger: Logger,
): Promise<MetricsListener> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics' && (req.method === 'GET' || req.method === 'HEAD')) return handler(req, res);
    res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: this port serves GET /metrics\n');
  });
  let bound: number;
  try {
    bound = await listen(server, host, port);
  } catch (err) {
    if (port !== DEFAULT_PROMETHEUS_PORT) {
      throw runtimeError(
        `telemetry_config.prometheusPort: cannot serve /metrics on ${host}:${port}: ${errorMessage(err)}`,
      );
    }
    bound = await listen(server, host, 0);
    logger.warn({ port: bound }, `port ${port} is taken: serving /metrics on port ${bound} instead`);
  }
  const h = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${h}:${bound}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
