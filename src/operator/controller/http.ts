/**
 * The probe and metrics endpoints of the controller process:
 * - `/healthz`: 200 while the process runs its event loop (liveness).
 * - `/readyz`: 200 once every informer has listed and watches; 503 with the reason otherwise.
 *   Leadership does not count: a standby replica with synced caches is ready to take over at any
 *   moment, and tying readiness to the lease would mark every standby unready and stall rollouts.
 * - `/metrics`: Prometheus text format.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PROMETHEUS_CONTENT_TYPE, type Registry } from './metrics.js';

export interface ProbeServerOptions {
  port: number;
  /** Listen address; loopback unless the pod's probes need more. */
  host?: string;
  /** Empty when ready, else why not (one line each). */
  notReady: () => string[];
  registry: Registry;
}

export interface ProbeServer {
  server: Server;
  port: number;
  close(): Promise<void>;
}

export async function startProbeServer(options: ProbeServerOptions): Promise<ProbeServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const text = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return text(405, 'method not allowed\n');
    if (path === '/healthz') return text(200, 'ok\n');
    if (path === '/readyz') {
      const reasons = options.notReady();
      return reasons.length ? text(503, `not ready:\n${reasons.join('\n')}\n`) : text(200, 'ok\n');
    }
    if (path === '/metrics') return text(200, options.registry.render(), PROMETHEUS_CONTENT_TYPE);
    text(404, 'not found: try /healthz, /readyz or /metrics\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
