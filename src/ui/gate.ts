/**
 * Who may talk to the dashboard. The printed link carries a one-time login token; exchanging it
 * sets a session cookie (HttpOnly, SameSite=Strict) and spends the token. Every request must
 * name the dashboard's own Host (a DNS-rebinding page names its own) and, when it carries an
 * Origin, the dashboard's own origin; every state change must be a POST with a JSON body, the
 * session cookie and the dashboard's Origin (a cross-site form cannot send JSON, a cross-origin
 * fetch of JSON needs a preflight the dashboard never grants).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { networkInterfaces } from 'node:os';
import { isIP } from 'node:net';
import { isLoopbackHost } from '../util/net.js';

export const COOKIE_NAME = 'moat_ui_session';

export type Verdict = { ok: true } | { ok: false; status: 401 | 403 | 405 | 415; message: string };

const ALLOWED: Verdict = { ok: true };

function secret(): string {
  return randomBytes(32).toString('base64url');
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The host names the dashboard answers to when bound to `host` (a wildcard: every local address). */
export function dashboardHostNames(host: string): string[] {
  const names = new Set(['127.0.0.1', 'localhost', '[::1]']);
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === '0.0.0.0' || bare === '::') {
    for (const addresses of Object.values(networkInterfaces()))
      for (const a of addresses ?? []) names.add(a.family === 'IPv6' ? `[${a.address}]` : a.address);
  } else if (!isLoopbackHost(bare)) {
    names.add(isIP(bare) === 6 ? `[${bare}]` : bare);
  }
  return [...names];
}

export class Gate {
  private loginToken: string | undefined = secret();
  private readonly session = secret();
  private readonly hosts: Set<string>;
  private readonly origins: Set<string>;

  constructor(hostNames: readonly string[], port: number) {
    this.hosts = new Set(hostNames.map((h) => `${h}:${port}`.toLowerCase()));
    this.origins = new Set([...this.hosts].map((h) => `http://${h}`));
  }

  /** The token of the printed link, until it is spent. */
  get token(): string | undefined {
    return this.loginToken;
  }

  /** Host and Origin: the checks every request passes first (DNS rebinding, cross-origin calls). */
  checkOrigin(req: IncomingMessage): Verdict {
    const host = (req.headers.host ?? '').toLowerCase();
    if (!this.hosts.has(host)) return { ok: false, status: 403, message: 'this Host is not the dashboard' };
    const origin = req.headers.origin;
    if (origin !== undefined && !this.origins.has(origin.toLowerCase()))
      return { ok: false, status: 403, message: 'this Origin is not the dashboard' };
    const site = req.headers['sec-fetch-site'];
    if (site === 'cross-site' || site === 'same-site')
      return { ok: false, status: 403, message: 'requests from other sites are refused' };
    return ALLOWED;
  }

  /** Exchanges the login token for the session cookie's value; undefined when wrong or spent. */
  login(token: string): string | undefined {
    if (this.loginToken === undefined || !sameSecret(token, this.loginToken)) return undefined;
    this.loginToken = undefined;
    return this.session;
  }

  cookie(): string {
    return `${COOKIE_NAME}=${this.session}; HttpOnly; SameSite=Strict; Path=/`;
  }

  checkSession(req: IncomingMessage): Verdict {
    const value = sessionCookie(req.headers.cookie);
    if (value !== undefined && sameSecret(value, this.session)) return ALLOWED;
    return {
      ok: false,
      status: 401,
      message:
        'open the dashboard with the link "moat ui" printed (it works once; "moat ui --stop", then "moat ui" prints a new one)',
    };
  }

  /** A state change: POST, a JSON body, the dashboard's own Origin (on top of Host and session). */
  checkChange(req: IncomingMessage): Verdict {
    if (req.method !== 'POST') return { ok: false, status: 405, message: 'changes are POST requests' };
    if (!req.headers.origin)
      return { ok: false, status: 403, message: 'a change must carry the dashboard Origin' };
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json')
      return { ok: false, status: 415, message: 'a change must be sent as application/json' };
    return ALLOWED;
  }
}

function sessionCookie(header: string | undefined): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === COOKIE_NAME) return value.join('=');
  }
  return undefined;
}
