import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { planProtocolImage } from './build.js';

const dir = mkdtempSync(join(tmpdir(), 'moat-build-plan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function goProject(name: string): string {
  const root = join(dir, name);
  mkdirSync(join(root, 'cmd/server'), { recursive: true });
  mkdirSync(join(root, '.git'), { recursive: true });
  writeFileSync(join(root, 'go.mod'), 'module example.com/x\n');
  writeFileSync(join(root, 'cmd/server/main.go'), 'package main\nfunc main() {}\n');
  writeFileSync(join(root, '.git/HEAD'), 'ref: refs/heads/main\n');
  return root;
}

describe('planProtocolImage', () => {
  it('tags by content: the same inputs give the same image, any option changes it, proxy settings do not', () => {
    const request = { scheme: 'npx', pkg: '@modelcontextprotocol/server-everything@2026.8.31' } as const;
    const image = planProtocolImage(request, { env: {} }).image;
    expect(image).toMatch(
      /^localhost\/moat-build\/npx-modelcontextprotocol-server-everything-2026-8-31:[0-9a-f]{16}$/,
    );
    expect(planProtocolImage(request, { env: { HTTPS_PROXY: 'http://proxy:3128' } }).image).toBe(image);
    for (const changed of [
      { ...request, additionalPackages: ['curl'] },
      { ...request, builderImage: 'localhost/node:24' },
      { ...request, caCertPem: '-----BEGIN CERTIFICATE-----\nx\n' },
      { ...request, pkg: '@modelcontextprotocol/server-everything@2026.8.18' },
    ]) {
      expect(planProtocolImage(changed, { env: {} }).image).not.toBe(image);
    }
    expect(planProtocolImage(request, { env: { MOAT_BUILD_IMAGE_NPX: 'localhost/n:1' } }).image).not.toBe(
      image,
    );
  });

  it('a local Go project: the module root is the context (.git left out) and a changed source gives a new tag', () => {
    const root = goProject('project');
    const plan = planProtocolImage({ scheme: 'go', pkg: './cmd/server' }, { cwd: root, env: {} });
    expect(plan.files.map(([path]) => path)).toEqual([
      'moat-install-packages.sh',
      'src/cmd/server/main.go',
      'src/go.mod',
    ]);
    expect(plan.containerfile).toContain("go build -trimpath -o /out/mcp-server './cmd/server'");
    // Run from inside the package directory: the module root is found upwards.
    const fromInside = planProtocolImage(
      { scheme: 'go', pkg: '.' },
      { cwd: join(root, 'cmd/server'), env: {} },
    );
    expect(fromInside.containerfile).toContain("go build -trimpath -o /out/mcp-server './cmd/server'");

    writeFileSync(join(root, 'cmd/server/main.go'), 'package main\nfunc main() { println() }\n');
    expect(planProtocolImage({ scheme: 'go', pkg: './cmd/server' }, { cwd: root, env: {} }).image).not.toBe(
      plan.image,
    );
  });

  it('a local path without a Go module or directory is a usage error naming the target', () => {
    expect(() => planProtocolImage({ scheme: 'go', pkg: './missing' }, { cwd: dir, env: {} })).toThrow(
      /^target go:\/\/\.\/missing: directory not found: /,
    );
    expect(() => planProtocolImage({ scheme: 'go', pkg: '/' }, { env: {} })).toThrow(
      'target go:///: no go.mod in / or any parent directory',
    );
  });
});
