import { describe, expect, it } from 'vitest';
import {
  assertValidName,
  nameFromImage,
  nameFromPackage,
  nameFromUrl,
  nameProblem,
  sanitizeWorkloadName,
} from './names.js';

describe('default names (as ToolHive derives them)', () => {
  it.each([
    ['ghcr.io/github/github-mcp-server:latest', 'github-github-mcp-server'],
    ['fetch:1.0', 'fetch'],
    ['localhost:5000/team/server:2', 'team-server'],
    ['registry:5000/server', 'registry-server'],
    ['docker.io/library/my_server@sha256:abc', 'library-my-server'],
  ])('image %s → %s', (image, name) => expect(nameFromImage(image)).toBe(name));

  it.each([
    ['https://api.github.com/mcp', 'github'],
    ['http://localhost:8080/mcp', 'localhost'],
    ['https://mcp.example.co/sse', 'example'],
  ])('url %s → %s', (url, name) => expect(nameFromUrl(url)).toBe(name));

  it.each([
    ['@modelcontextprotocol/server-everything', 'modelcontextprotocol-server-everything'],
    ['./cmd/server', 'cmd-server'],
    ['mcp-server-fetch', 'mcp-server-fetch'],
  ])('package %s → %s', (pkg, name) => expect(nameFromPackage(pkg)).toBe(name));
});

describe('sanitizeWorkloadName', () => {
  it.each([
    ['fine-name_1.2', 'fine-name_1.2'],
    ['../etc/passwd', '---etc-passwd'],
    ['/abs', 'abs'],
    ['a;b|c&d`e$(f)', 'a-b-c-d-e-f-'],
    ['', 'workload'],
    ['x'.repeat(150), 'x'.repeat(100)],
  ])('%j → %j', (raw, clean) => {
    expect(sanitizeWorkloadName(raw)).toBe(clean);
    expect(nameProblem(sanitizeWorkloadName(raw))).toBeUndefined();
  });
});

describe('assertValidName', () => {
  it.each(['..', '.', 'a/b', 'a b', '', 'a..b', 'x'.repeat(101)])('rejects %j with the reason', (name) => {
    expect(() => assertValidName(name)).toThrow(/invalid workload name/);
  });
  it('accepts a normal name', () => expect(assertValidName('fetch-1')).toBe('fetch-1'));
});
