/**
 * The generated multi-stage Containerfile of a protocol-scheme build: a builder stage that
 * installs the package with the ecosystem's own tool, and a runtime stage with only what the
 * server needs, running as an unprivileged user. The same steps work on Debian- and
 * Alpine-based images (the package manager is detected at build time), and packages a base
 * image already has are not installed again, so a complete base image needs no OS mirror.
 * Pure: the request was checked by checkRequest().
 */
import type { LocalProject } from './local-project.js';
import { DEFAULT_PACKAGES, splitVersion, type BaseImages, type ProtocolBuildRequest } from './recipe.js';

export interface BuildPlan {
  containerfile: string;
  /** Context files besides the Containerfile (path → content), sorted by path. */
  files: [string, Buffer][];
}

/** Where a --ca-cert lands in the context and in both stages. */
const CA_FILE = 'moat-ca.crt';
const CA_PATH = `/usr/local/share/ca-certificates/${CA_FILE}`;
const SYSTEM_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
/** The unprivileged user of the runtime stage (no useradd/adduser needed: Debian and Alpine alike). */
export const RUNTIME_UID = 10001;

/** Quotes a value for sh (values were validated; this keeps the Containerfile obviously safe). */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Appends the CA to the system bundle before anything is fetched; installs it for the tools. */
function trustCa(withCa: boolean): string[] {
  if (!withCa) return [];
  return [
    `COPY ${CA_FILE} ${CA_PATH}`,
    `RUN mkdir -p /etc/ssl/certs && cat ${CA_PATH} >> ${SYSTEM_BUNDLE}`,
    // Node and uv bring their own roots unless told to use the system bundle.
    `ENV NODE_EXTRA_CA_CERTS=${SYSTEM_BUNDLE} SSL_CERT_FILE=${SYSTEM_BUNDLE}`,
  ];
}

/**
 * Installs the packages the image lacks, with apk or apt-get, whichever the image has (a context
 * file, so the build log shows one short step).
 */
const INSTALL_SCRIPT = `set -eu
missing=""
for p in "$@"; do
  if command -v apk >/dev/null 2>&1; then apk info -e "$p" >/dev/null 2>&1 || missing="$missing $p"
  else dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; fi
done
if [ -n "$missing" ]; then
  if command -v apk >/dev/null 2>&1; then apk add --no-cache $missing
  elif command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
    rm -rf /var/lib/apt/lists/*
  else echo "cannot install$missing: the base image has neither apk nor apt-get" >&2; exit 1; fi
fi
# A CA added before the install is kept when ca-certificates rebuilds the bundle.
if command -v update-ca-certificates >/dev/null 2>&1; then update-ca-certificates >/dev/null 2>&1 || true; fi
`;
const INSTALL_FILE = 'moat-install-packages.sh';

function installPackages(packages: readonly string[]): string[] {
  return [
    `COPY ${INSTALL_FILE} /tmp/${INSTALL_FILE}`,
    `RUN sh /tmp/${INSTALL_FILE} ${packages.join(' ')} && rm /tmp/${INSTALL_FILE}`,
  ];
}

function runtimeUser(): string[] {
  return [
    `RUN echo 'moat:x:${RUNTIME_UID}:${RUNTIME_UID}::/home/moat:/sbin/nologin' >> /etc/passwd && ` +
      `echo 'moat:x:${RUNTIME_UID}:' >> /etc/group && mkdir -p /home/moat && ` +
      `chown ${RUNTIME_UID}:${RUNTIME_UID} /home/moat`,
    'ENV HOME=/home/moat',
  ];
}

function stage(
  from: string,
  name: string | undefined,
  withCa: boolean,
  packages: readonly string[],
): string[] {
  return [`FROM ${from}${name ? ` AS ${name}` : ''}`, ...trustCa(withCa), ...installPackages(packages)];
}

/** Links the package's command (as npx picks it) to /build/moat-server. */
const LINK_BIN = `const [name] = process.argv.slice(2);
const fs = require('fs');
const meta = require(\`/build/node_modules/\${name}/package.json\`);
const short = name.split('/').pop();
const bins = typeof meta.bin === 'string' ? { [short]: meta.bin } : (meta.bin ?? {});
const names = Object.keys(bins);
const bin = names.length === 1 ? bins[names[0]] : bins[short];
if (!bin) {
  console.error(\`package \${name} has no single command to run (bin: \${names.join(', ') || 'none'})\`);
  process.exit(1);
}
fs.symlinkSync(\`node_modules/\${name}/\${bin}\`, '/build/moat-server');
`;
const LINK_BIN_FILE = 'moat-link-bin.js';

/**
 * npm: installs the package into /build/node_modules and links its command (the only `bin`, or
 * the one named after the package, as npx picks it) to /build/moat-server.
 */
function npx(pkg: string): { build: string[]; copy: string[]; entrypoint: string[] } {
  const { name } = splitVersion(pkg);
  return {
    build: [
      'ENV NODE_ENV=production NPM_CONFIG_LOGLEVEL=error NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false ' +
        'NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_PROGRESS=false',
      'WORKDIR /build',
      `RUN echo '{"name":"moat-server","version":"1.0.0","private":true}' > package.json && ` +
        `npm install --save-exact ${shellQuote(pkg)}`,
      `COPY ${LINK_BIN_FILE} /tmp/${LINK_BIN_FILE}`,
      `RUN node /tmp/${LINK_BIN_FILE} ${shellQuote(name)} && rm /tmp/${LINK_BIN_FILE}`,
    ],
    copy: ['COPY --from=builder /build/ /app/'],
    entrypoint: ['node', '/app/moat-server'],
  };
}

/** PyPI: `uv tool install` into /opt/uv-tools (with its own Python, if uv had to fetch one). */
function uvx(
  pkg: string,
  buildWith: readonly string[],
): { build: string[]; copy: string[]; entrypoint: string[] } {
  const { name, version } = splitVersion(pkg);
  const requirement = version === undefined ? name : `${name}==${version}`;
  const command = name.replace(/\[.*\]$/, '');
  const withArgs = buildWith.map((spec) => `--with ${shellQuote(spec)} `).join('');
  return {
    build: [
      'ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 ' +
        'UV_TOOL_DIR=/opt/uv-tools UV_TOOL_BIN_DIR=/opt/uv-tools/bin UV_PYTHON_INSTALL_DIR=/opt/uv-python ' +
        'UV_NO_CACHE=1 UV_LINK_MODE=copy',
      'RUN command -v uv >/dev/null 2>&1 || python3 -m pip install --no-cache-dir uv',
      `RUN mkdir -p /opt/uv-python && uv tool install ${withArgs}${shellQuote(requirement)}`,
      `RUN test -x /opt/uv-tools/bin/${command} || { echo "package ${name} installs no command named ${command}" >&2; exit 1; }`,
    ],
    copy: [
      'COPY --from=builder /opt/uv-python /opt/uv-python',
      'COPY --from=builder /opt/uv-tools /opt/uv-tools',
      'ENV PATH=/opt/uv-tools/bin:$PATH PYTHONUNBUFFERED=1',
    ],
    entrypoint: [`/opt/uv-tools/bin/${command}`],
  };
}

/** Go: `go install module@version` (remote) or `go build` of the local module, statically linked. */
function go(
  pkg: string,
  local: LocalProject | undefined,
): { build: string[]; copy: string[]; entrypoint: string[] } {
  const install = local
    ? [
        'COPY src/ /build/',
        `RUN mkdir -p /out && go build -trimpath -o /out/mcp-server ${shellQuote(local.buildPath)}`,
      ]
    : [
        `RUN GOBIN=/out/bin go install -trimpath ${shellQuote(pkg.includes('@') ? pkg : `${pkg}@latest`)} && ` +
          'set -- /out/bin/*; ' +
          `if [ "$#" -ne 1 ]; then echo "module ${pkg} installs $# commands, expected one: $*" >&2; exit 1; fi; ` +
          'mv "$1" /out/mcp-server',
      ];
  return {
    build: ['ENV CGO_ENABLED=0 GOOS=linux', 'WORKDIR /build', ...install],
    copy: ['COPY --from=builder /out/mcp-server /app/mcp-server'],
    entrypoint: ['/app/mcp-server'],
  };
}

export function renderContainerfile(
  request: ProtocolBuildRequest,
  images: BaseImages,
  local?: LocalProject,
): BuildPlan {
  const withCa = request.caCertPem !== undefined;
  const packages = [...new Set([...DEFAULT_PACKAGES, ...(request.additionalPackages ?? [])])];
  const steps =
    request.scheme === 'npx'
      ? npx(request.pkg)
      : request.scheme === 'uvx'
        ? uvx(request.pkg, request.buildWith ?? [])
        : go(request.pkg, local);
  const containerfile = [
    `# Generated by moat for ${request.scheme}://${request.pkg}`,
    ...stage(images.builder, 'builder', withCa, packages),
    ...steps.build,
    '',
    ...stage(images.runtime, undefined, withCa, packages),
    ...runtimeUser(),
    'WORKDIR /app',
    ...steps.copy,
    `USER ${RUNTIME_UID}:${RUNTIME_UID}`,
    `ENTRYPOINT ${JSON.stringify(steps.entrypoint)}`,
    'CMD []',
    '',
  ].join('\n');
  const files: [string, Buffer][] = [
    ...(withCa ? [[CA_FILE, Buffer.from(request.caCertPem as string)] as [string, Buffer]] : []),
    ...(request.scheme === 'npx' ? [[LINK_BIN_FILE, Buffer.from(LINK_BIN)] as [string, Buffer]] : []),
    [INSTALL_FILE, Buffer.from(INSTALL_SCRIPT)],
    ...(local?.files ?? []).map(([path, content]): [string, Buffer] => [`src/${path}`, content]),
  ];
  files.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { containerfile, files };
}
