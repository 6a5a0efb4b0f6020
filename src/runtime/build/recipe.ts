/**
 * What a protocol-scheme build (`npx://`, `uvx://`, `go://`) is made of: the request, the
 * ecosystem defaults and the checks on every value that ends up inside the generated
 * Containerfile (values are interpolated into shell commands, so they are validated first).
 * Pure: no I/O.
 */
import { isValidImageRef } from '../image-ref.js';
import { usageError } from '../../util/errors.js';

export const PROTOCOL_SCHEMES = ['uvx', 'npx', 'go'] as const;
export type ProtocolScheme = (typeof PROTOCOL_SCHEMES)[number];

/** `npx://pkg` → { scheme, pkg }; undefined for anything else (the package may be empty). */
export function parseProtocolTarget(raw: string): { scheme: ProtocolScheme; pkg: string } | undefined {
  const scheme = PROTOCOL_SCHEMES.find((s) => raw.startsWith(`${s}://`));
  return scheme === undefined ? undefined : { scheme, pkg: raw.slice(scheme.length + 3) };
}

/** The build-time options of a protocol target (RunConfig `runtime_config`, flags of the same name). */
export interface BuildOptions {
  /** --runtime-image: base of the builder stage, and of the runtime stage for npx and uvx. */
  builderImage?: string;
  /** --runtime-add-package: extra OS packages in both stages. */
  additionalPackages?: readonly string[];
  /** --build-with: PEP 508 specifiers for `uv tool install --with` (uvx only). */
  buildWith?: readonly string[];
  /** --ca-cert: PEM text trusted in both stages (the caller reads the file). */
  caCertPem?: string;
}

export interface ProtocolBuildRequest extends BuildOptions {
  scheme: ProtocolScheme;
  /** The package after `<scheme>://`, e.g. `@scope/pkg@1.2.0`, `mcp-server-time`, `./cmd/server`. */
  pkg: string;
}

/** Images the defaults use; each can be replaced by `MOAT_BUILD_IMAGE_<SCHEME>` (see images()). */
export const DEFAULT_IMAGES: Readonly<Record<ProtocolScheme, string>> = {
  npx: 'docker.io/library/node:24-alpine',
  uvx: 'docker.io/library/python:3.14-slim',
  go: 'docker.io/library/golang:1.26-alpine',
};
/** The runtime stage of a Go build: the static binary needs no Go toolchain. */
export const DEFAULT_GO_RUNTIME_IMAGE = 'docker.io/library/alpine:3.23';
/** OS packages every build installs (when the base image lacks them). */
export const DEFAULT_PACKAGES: readonly string[] = ['ca-certificates', 'git'];

export interface BaseImages {
  builder: string;
  /** The final stage's base. */
  runtime: string;
}

/**
 * The base images of a build: --runtime-image, else `MOAT_BUILD_IMAGE_<SCHEME>`, else the public
 * default. Go's runtime stage: `MOAT_BUILD_RUNTIME_IMAGE_GO`, else Alpine.
 */
export function baseImages(
  scheme: ProtocolScheme,
  builderImage: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): BaseImages {
  const builder = builderImage ?? env[`MOAT_BUILD_IMAGE_${scheme.toUpperCase()}`] ?? DEFAULT_IMAGES[scheme];
  const runtime = scheme === 'go' ? (env.MOAT_BUILD_RUNTIME_IMAGE_GO ?? DEFAULT_GO_RUNTIME_IMAGE) : builder;
  for (const [what, ref] of [
    ['--runtime-image', builder],
    ['MOAT_BUILD_RUNTIME_IMAGE_GO', runtime],
  ] as const) {
    if (!isValidImageRef(ref)) throw usageError(`${what}: ${JSON.stringify(ref)} is not an image reference`);
  }
  return { builder, runtime };
}

const PACKAGE = /^[a-zA-Z0-9][a-zA-Z0-9._+-]*$/;
/** PEP 508 specifiers without quotes, `$`, `;` or anything else a shell would act on. */
const PEP508 = /^[A-Za-z0-9][A-Za-z0-9._+[\],<>=!~* -]*$/;
const MAX_VALUE = 128;

/** npm: `[@scope/]name[@version]`; PyPI: `name[extras][@version]`; Go: a module path[@version]. */
const PACKAGE_SHAPES: Readonly<Record<ProtocolScheme, RegExp>> = {
  npx: /^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*(@[A-Za-z0-9._~^<>=-]+)?$/,
  uvx: /^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9._,-]+\])?(@[A-Za-z0-9._+!-]+)?$/,
  go: /^[A-Za-z0-9][A-Za-z0-9._~/-]*(@[A-Za-z0-9._+/-]+)?$/,
};

/** A local Go project: `.`, `./x`, `../x` or an absolute path. */
export function isLocalGoPath(pkg: string): boolean {
  return pkg === '.' || pkg.startsWith('./') || pkg.startsWith('../') || pkg.startsWith('/');
}

/** Throws a usage error naming the flag or target at fault; returns the request unchanged. */
export function checkRequest(request: ProtocolBuildRequest): ProtocolBuildRequest {
  const { scheme, pkg } = request;
  const local = scheme === 'go' && isLocalGoPath(pkg);
  if (!local && (pkg.length > 214 || !PACKAGE_SHAPES[scheme].test(pkg))) {
    throw usageError(
      `target ${scheme}://${pkg}: not a valid ${ECOSYSTEM[scheme]} package name ` +
        `(allowed: ${ALLOWED_SHAPE[scheme]})`,
    );
  }
  for (const p of request.additionalPackages ?? []) {
    if (p.length > MAX_VALUE || !PACKAGE.test(p)) {
      throw usageError(
        `--runtime-add-package ${JSON.stringify(p)}: not an OS package name (letters, digits, . _ + -)`,
      );
    }
  }
  const buildWith = request.buildWith ?? [];
  if (buildWith.length > 0 && scheme !== 'uvx') {
    throw usageError(
      `--build-with is only supported for uvx:// targets (a PEP 508 constraint); ${scheme}:// has no constraint support`,
    );
  }
  for (const spec of buildWith) {
    if (spec.length > MAX_VALUE || !PEP508.test(spec)) {
      throw usageError(
        `--build-with ${JSON.stringify(spec)}: not a PEP 508 requirement (e.g. "httpx>=0.27", "rich==13.7.1")`,
      );
    }
  }
  if (request.caCertPem !== undefined && !/-----BEGIN CERTIFICATE-----/.test(request.caCertPem)) {
    throw usageError('--ca-cert: the file holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  }
  return request;
}

const ECOSYSTEM: Readonly<Record<ProtocolScheme, string>> = { npx: 'npm', uvx: 'PyPI', go: 'Go module' };
const ALLOWED_SHAPE: Readonly<Record<ProtocolScheme, string>> = {
  npx: '[@scope/]name[@version]',
  uvx: 'name[extras][@version]',
  go: 'module/path[@version], or ./path for a local project',
};

/** Splits `name@version` (a leading `@` of an npm scope is part of the name). */
export function splitVersion(pkg: string): { name: string; version?: string } {
  const at = pkg.lastIndexOf('@');
  if (at <= 0) return { name: pkg };
  return { name: pkg.slice(0, at), version: pkg.slice(at + 1) };
}
