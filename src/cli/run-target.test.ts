import { describe, expect, it } from 'vitest';
import { defaultWorkloadName, detectTarget } from './run-target.js';

describe('detectTarget and the default workload name', () => {
  it.each([
    ['https://api.github.com/mcp', 'remote', 'github'],
    ['http://localhost:8080/mcp', 'remote', 'localhost'],
    ['http://127.0.0.1:9000/mcp', 'remote', '127-0-0-1'],
    ['npx://@modelcontextprotocol/server-everything', 'protocol', 'modelcontextprotocol-server-everything'],
    ['uvx://mcp-server-fetch@1.2.0', 'protocol', 'mcp-server-fetch-1-2-0'],
    ['go://./cmd/server', 'protocol', 'cmd-server'],
    ['ghcr.io/github/github-mcp-server:latest', 'image', 'github-github-mcp-server'],
    ['localhost:5000/team/tool:1', 'image', 'team-tool'],
    ['fetch', 'image', 'fetch'],
  ])('%s is %s named %s', (raw, kind, name) => {
    const target = detectTarget(raw);
    expect(target.kind).toBe(kind);
    expect(defaultWorkloadName(target)).toBe(name);
  });

  it('marks local go packages', () => {
    expect(detectTarget('go://./cmd/server')).toMatchObject({ kind: 'protocol', scheme: 'go', local: true });
    expect(detectTarget('go://github.com/x/y@latest')).toMatchObject({ local: false });
  });

  it.each([
    ['uvx://', /a package is missing after uvx:\/\//],
    ['Not An Image', /not an image reference, protocol scheme or http\(s\) URL/],
    ['ftp://example.com/x', /not an image reference, protocol scheme/],
  ])('rejects %j', (raw, error) => {
    expect(() => detectTarget(raw)).toThrow(error);
  });
});
