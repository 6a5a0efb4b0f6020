import { describe, expect, it } from 'vitest';
import { DEFAULTS } from './defaults.js';
import {
  clientPath,
  clientTransport,
  groupOf,
  proxyReadTimeoutMs,
  redisCommandTimeoutMs,
  remoteAuthTimeoutMs,
  sessionTtlMs,
  webhookTimeoutMs,
} from './derived.js';

describe('clientTransport', () => {
  it.each([
    [{ transport: 'stdio' }, 'streamable-http'],
    [{ transport: 'stdio', proxy_mode: 'sse' }, 'sse'],
    [{ transport: 'stdio', proxy_mode: 'streamable-http' }, 'streamable-http'],
    [{ transport: 'sse' }, 'sse'],
    // An HTTP server's own transport wins over a stray proxy_mode (as ToolHive reads it).
    [{ transport: 'sse', proxy_mode: 'streamable-http' }, 'sse'],
    [{ transport: 'streamable-http', proxy_mode: 'sse' }, 'streamable-http'],
  ] as const)('%j → %s', (config, expected) => {
    expect(clientTransport(config)).toBe(expected);
  });
});

describe('clientPath', () => {
  it.each([
    [{ transport: 'stdio' }, '/mcp'],
    [{ transport: 'stdio', proxy_mode: 'sse' }, '/sse'],
    [{ transport: 'sse' }, '/sse'],
    [{ transport: 'streamable-http' }, '/mcp'],
    [{ transport: 'streamable-http', remote_url: 'https://api.example.com/v1/mcp?x=1' }, '/v1/mcp'],
    [{ transport: 'sse', remote_url: 'https://api.example.com' }, '/mcp'],
  ] as const)('%j → %s', (config, expected) => {
    expect(clientPath(config)).toBe(expected);
  });
});

describe('groupOf', () => {
  it('is the group, or the default group when none is set or the config is unreadable', () => {
    expect(groupOf({ group: 'team-a' })).toBe('team-a');
    expect(groupOf({})).toBe(DEFAULTS.group);
    expect(groupOf(undefined)).toBe('default');
  });
});

describe('durations in milliseconds, defaults applied', () => {
  it('session_ttl', () => {
    expect(sessionTtlMs({})).toBe(2 * 3_600_000);
    expect(sessionTtlMs({ session_ttl: '1h30m0s' })).toBe(5_400_000);
  });

  it('proxy_read_timeout', () => {
    expect(proxyReadTimeoutMs({})).toBe(30_000);
    expect(proxyReadTimeoutMs({ proxy_read_timeout: '250ms' })).toBe(250);
  });

  it('scaling_config.session_redis.command_timeout', () => {
    expect(redisCommandTimeoutMs({})).toBe(2000);
    expect(redisCommandTimeoutMs({ command_timeout: '750ms' })).toBe(750);
  });

  it.each([
    ['session_ttl', () => sessionTtlMs({ session_ttl: '2 hours' })],
    ['proxy_read_timeout', () => proxyReadTimeoutMs({ proxy_read_timeout: '0s' })],
    [
      'scaling_config.session_redis.command_timeout',
      () => redisCommandTimeoutMs({ command_timeout: '2 seconds' }),
    ],
  ])('a %s that skipped the schema is a usage error naming the field', (field, read) => {
    expect(read).toThrow(new RegExp(`^${field} ".*": expected a positive duration such as 30s`));
  });

  it('remote_auth_config.timeout and webhook timeouts are nanoseconds; absent or 0 is the default', () => {
    expect(remoteAuthTimeoutMs(undefined)).toBe(30_000);
    expect(remoteAuthTimeoutMs({ timeout: 0 })).toBe(30_000);
    expect(remoteAuthTimeoutMs({ timeout: 45_000_000_000 })).toBe(45_000);
    expect(webhookTimeoutMs({})).toBe(10_000);
    expect(webhookTimeoutMs({ timeout: 5_000_000_000 })).toBe(5000);
  });
});
