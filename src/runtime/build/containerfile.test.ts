import { describe, expect, it } from 'vitest';
import { renderContainerfile, shellQuote } from './containerfile.js';
import type { ProtocolBuildRequest } from './recipe.js';

const images = { builder: 'localhost/base:1', runtime: 'localhost/base:1' };
const render = (request: ProtocolBuildRequest) => renderContainerfile(request, images).containerfile;

describe('renderContainerfile', () => {
  it('npx: installs the exact package in a builder stage and runs its command as an unprivileged user', () => {
    const text = render({ scheme: 'npx', pkg: '@modelcontextprotocol/server-everything@2025.9.25' });
    expect(text).toContain('FROM localhost/base:1 AS builder');
    expect(text).toContain("npm install --save-exact '@modelcontextprotocol/server-everything@2025.9.25'");
    // The command is looked up by the package name without its version.
    expect(text).toContain("RUN node /tmp/moat-link-bin.js '@modelcontextprotocol/server-everything'");
    expect(text).toContain('COPY --from=builder /build/ /app/');
    expect(text).toContain('USER 10001:10001');
    expect(text).toContain('ENTRYPOINT ["node","/app/moat-server"]');
    expect(text.indexOf('USER 10001')).toBeGreaterThan(text.lastIndexOf('FROM '));
  });

  it('uvx: a version becomes ==, --build-with becomes --with, the command is the package name', () => {
    const text = render({ scheme: 'uvx', pkg: 'mcp-server-time@2025.9.25', buildWith: ['tzdata>=2024.1'] });
    expect(text).toContain("uv tool install --with 'tzdata>=2024.1' 'mcp-server-time==2025.9.25'");
    expect(text).toContain('ENTRYPOINT ["/opt/uv-tools/bin/mcp-server-time"]');
    expect(text).toContain('COPY --from=builder /opt/uv-tools /opt/uv-tools');
  });

  it('go: a module without a version installs @latest; the runtime stage has its own base', () => {
    const text = renderContainerfile(
      { scheme: 'go', pkg: 'example.com/srv/cmd/x' },
      { builder: 'golang:1', runtime: 'alpine:3' },
    ).containerfile;
    expect(text).toContain("go install -trimpath 'example.com/srv/cmd/x@latest'");
    expect(text).toContain('FROM golang:1 AS builder');
    expect(text).toMatch(/\nFROM alpine:3\n/);
    expect(text).toContain('ENTRYPOINT ["/app/mcp-server"]');
  });

  it('go: a local project is copied into the context under src/ and built at its path', () => {
    const plan = renderContainerfile({ scheme: 'go', pkg: './cmd/x' }, images, {
      buildPath: './cmd/x',
      files: [['go.mod', Buffer.from('module m')]],
    });
    expect(plan.containerfile).toContain('COPY src/ /build/');
    expect(plan.containerfile).toContain("go build -trimpath -o /out/mcp-server './cmd/x'");
    expect(plan.files.map(([path]) => path)).toEqual(['moat-install-packages.sh', 'src/go.mod']);
  });

  it('--ca-cert is trusted in both stages before anything is fetched; --runtime-add-package in both', () => {
    const plan = renderContainerfile(
      {
        scheme: 'npx',
        pkg: 'pkg',
        caCertPem: '-----BEGIN CERTIFICATE-----\nx\n',
        additionalPackages: ['curl'],
      },
      images,
    );
    const text = plan.containerfile;
    expect(text.match(/COPY moat-ca.crt /g)).toHaveLength(2);
    expect(text.match(/RUN sh \/tmp\/moat-install-packages.sh ca-certificates git curl /g)).toHaveLength(2);
    expect(text.indexOf('COPY moat-ca.crt')).toBeLessThan(text.indexOf('moat-install-packages.sh'));
    expect(text).toContain('NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt');
    expect(plan.files.map(([path]) => path)).toEqual([
      'moat-ca.crt',
      'moat-install-packages.sh',
      'moat-link-bin.js',
    ]);
    expect(plan.files[0]?.[1].toString()).toBe('-----BEGIN CERTIFICATE-----\nx\n');
  });

  it('quotes values for sh', () => {
    expect(shellQuote("a'b")).toBe(`'a'\\''b'`);
  });
});
