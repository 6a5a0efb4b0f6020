/** Small address facts shared by the CLI, the proxy and outbound auth. */
import { isIP } from 'node:net';

/** True for localhost, 127.0.0.0/8 (also IPv4-mapped, e.g. ::ffff:127.0.0.1) and ::1, bracketed or not. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/^::ffff:(?=\d+\.)/, '');
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}
