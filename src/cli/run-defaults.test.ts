/**
 * `moat run --help` and docs/cli.md take every default from DEFAULTS: with other DEFAULTS the
 * help and the docs change with them (nothing is written twice).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DEFAULTS as RealDefaults } from '../config/defaults.js';

/** Every key of DEFAULTS, each with another value. */
const OTHER: Record<keyof typeof RealDefaults, string | number | string[]> = {
  host: '10.1.2.3',
  targetHost: '10.9.8.7',
  group: 'team-x',
  transport: 'sse',
  proxyMode: 'sse',
  permissionProfile: 'none',
  maxRequestBodySize: 3 * 1024 * 1024,
  proxyReadTimeoutMs: 45_000,
  upstreamTimeoutMs: 7 * 60 * 1000,
  sessionTtlMs: 90 * 60 * 1000,
  requestStateTtlMs: 3 * 60 * 1000,
  redisCommandTimeoutMs: 5000,
  imageVerification: 'enabled',
  oidcScopes: ['openid', 'groups'],
  remoteAuthOidcScopes: ['openid', 'offline_access'],
  otelSamplingRate: 0.25,
  remoteAuthCallbackPort: 9999,
  remoteAuthTimeoutMs: 60_000,
  webhookTimeoutMs: 5000,
};

/** The value help and docs show for each flag whose default comes from DEFAULTS, with OTHER in place. */
const EXPECTED: [flag: string, shown: string][] = [
  ['host', '10.1.2.3'],
  ['target-host', '10.9.8.7'],
  ['group', 'team-x'],
  ['transport', 'sse'],
  ['proxy-mode', 'sse'],
  ['permission-profile', 'none'],
  ['max-request-body-size', '3 MiB'],
  ['proxy-read-timeout', '45s'],
  ['upstream-timeout', '7m'],
  ['session-ttl', '1h30m'],
  ['request-state-ttl', '3m'],
  ['image-verification', 'enabled'],
  ['oidc-scopes', 'openid,groups'],
  ['remote-auth-scopes', 'openid,offline_access with OIDC'],
  ['otel-sampling-rate', '0.25'],
  ['remote-auth-callback-port', '9999'],
  ['remote-auth-timeout', '1m'],
];

async function helpWith(defaults: object): Promise<{ help: string; docs: string }> {
  vi.resetModules();
  vi.doMock('../config/defaults.js', async (importOriginal) => ({
    ...(await importOriginal<object>()),
    DEFAULTS: defaults,
  }));
  const { createRunCommand } = await import('./run-command.js');
  const { renderRunFlagsMarkdown } = await import('./run-docs.js');
  const help = createRunCommand().configureHelp({ helpWidth: 1000 }).helpInformation();
  return { help, docs: renderRunFlagsMarkdown() };
}

/** The help line of a flag. */
function helpLine(help: string, flag: string): string {
  return help.split('\n').find((line) => new RegExp(`^\\s+(?:-\\w, )?--${flag} `).test(line)) ?? '';
}

/** The docs/cli.md table row of a flag. */
function docsRow(docs: string, flag: string): string {
  return docs.split('\n').find((line) => line.startsWith('| ') && line.includes(`\`--${flag} `)) ?? '';
}

function defaultShown(value: string): RegExp {
  return new RegExp(`default: "?${value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"?\\)`);
}

afterEach(() => {
  vi.doUnmock('../config/defaults.js');
  vi.resetModules();
});

describe('defaults in help and docs come from DEFAULTS', () => {
  it('the real DEFAULTS show as before', async () => {
    const { DEFAULTS } = await import('../config/defaults.js');
    const { help } = await helpWith(DEFAULTS);
    expect(helpLine(help, 'max-request-body-size')).toMatch(defaultShown('8 MiB'));
    expect(helpLine(help, 'proxy-read-timeout')).toMatch(defaultShown('30s'));
    expect(helpLine(help, 'session-ttl')).toMatch(defaultShown('2h'));
    expect(helpLine(help, 'host')).toMatch(defaultShown('127.0.0.1'));
  });

  it.each(EXPECTED)('other DEFAULTS change the help and docs of --%s', async (flag, shown) => {
    const { help, docs } = await helpWith(OTHER);
    expect(helpLine(help, flag)).toMatch(defaultShown(shown));
    expect(docsRow(docs, flag)).toContain(`| ${shown} |`);
  });
});
