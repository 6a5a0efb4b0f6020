/**
 * Protocol-scheme images (`npx://`, `uvx://`, `go://`): the generated Containerfile and its
 * context are built through the engine's build API and tagged by a hash of everything that goes
 * into them, so the same package with the same options is built once and then reused.
 *
 * An unpinned package (`npx://pkg`) is resolved to its latest version at the first build and
 * that image is reused; pin a version (`npx://pkg@1.2.3`) to move, or remove the image.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { RuntimeConfig } from '../../config/runconfig.js';
import { errorMessage, usageError } from '../../util/errors.js';
import { tarStream, type TarEntry } from '../egress/tar.js';
import type { BuildProgress, ContainerRuntime } from '../types.js';
import { renderContainerfile, type BuildPlan } from './containerfile.js';
import { readLocalGoProject } from './local-project.js';
import {
  baseImages,
  checkRequest,
  isLocalGoPath,
  parseProtocolTarget,
  type ProtocolBuildRequest,
} from './recipe.js';

export type { ProtocolBuildRequest, ProtocolScheme, BuildOptions } from './recipe.js';
export { PROTOCOL_SCHEMES, parseProtocolTarget } from './recipe.js';

export const BUILD_REPOSITORY = 'localhost/moat-build';
/** Label on every built image: the target it was built from. */
export const BUILD_LABEL = 'moat-build-target';
const CONTAINERFILE = 'Containerfile';

/** Proxy settings of this host, handed to the build (they are not part of the image or its tag). */
const PROXY_VARIABLES = ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'ALL_PROXY'].flatMap((name) => [
  name,
  name.toLowerCase(),
]);

export interface ProtocolImageOptions {
  /** Resolves a local `go://./path` (default: the current directory). */
  cwd?: string;
  /** Where MOAT_BUILD_IMAGE_* and proxy settings are read (default: process.env). */
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}

/**
 * The build request of a RunConfig's protocol target (`protocol_target` and `runtime_config`);
 * reads the --ca-cert file.
 */
export function requestFromRunConfig(
  protocolTarget: string,
  config: RuntimeConfig = {},
): ProtocolBuildRequest {
  const parsed = parseProtocolTarget(protocolTarget);
  if (!parsed || parsed.pkg === '') {
    throw usageError(
      `protocol_target ${JSON.stringify(protocolTarget)} is not uvx://, npx:// or go:// with a package`,
    );
  }
  let caCertPem: string | undefined;
  if (config.ca_cert_path !== undefined) {
    try {
      caCertPem = readFileSync(config.ca_cert_path, 'utf8');
    } catch (err) {
      throw usageError(`--ca-cert: cannot read ${config.ca_cert_path}: ${errorMessage(err)}`);
    }
  }
  return {
    ...parsed,
    ...(config.builder_image !== undefined ? { builderImage: config.builder_image } : {}),
    ...(config.additional_packages ? { additionalPackages: config.additional_packages } : {}),
    ...(config.build_with ? { buildWith: config.build_with } : {}),
    ...(caCertPem !== undefined ? { caCertPem } : {}),
  };
}

/** The Containerfile and context of a request, and the image reference they hash to. */
export function planProtocolImage(
  request: ProtocolBuildRequest,
  options: Pick<ProtocolImageOptions, 'cwd' | 'env'> = {},
): BuildPlan & { image: string } {
  checkRequest(request);
  const images = baseImages(request.scheme, request.builderImage, options.env);
  const local =
    request.scheme === 'go' && isLocalGoPath(request.pkg)
      ? readLocalGoProject(request.pkg, options.cwd ?? process.cwd())
      : undefined;
  const plan = renderContainerfile(request, images, local);
  const hash = createHash('sha256');
  for (const part of [plan.containerfile, ...plan.files.flat()]) hash.update(`${part.length}:`).update(part);
  const image = `${BUILD_REPOSITORY}/${request.scheme}-${slug(request.pkg)}:${hash.digest('hex').slice(0, 16)}`;
  return { ...plan, image };
}

/**
 * Builds the image of a protocol target, or finds the one built before from the same inputs.
 * Returns the image reference. Bad input → usageError; a failed build → runtimeError naming the
 * failing step with its last lines.
 */
export async function buildProtocolImage(
  runtime: ContainerRuntime,
  request: ProtocolBuildRequest,
  onProgress: (progress: BuildProgress) => void = () => undefined,
  options: ProtocolImageOptions = {},
): Promise<string> {
  const plan = planProtocolImage(request, options);
  const { image } = plan;
  if (await runtime.findImage(image)) {
    onProgress({
      phase: 'done',
      image,
      message: `Using the image built before for ${target(request)} (${image})`,
    });
    return image;
  }
  onProgress({ phase: 'step', image, message: `Building ${image} for ${target(request)}` });
  const entries: TarEntry[] = [
    { type: 'file', path: CONTAINERFILE, content: Buffer.from(plan.containerfile) },
    ...plan.files.map(([path, content]): TarEntry => ({ type: 'file', path, content })),
  ];
  const env = options.env ?? process.env;
  const buildArgs = Object.fromEntries(
    PROXY_VARIABLES.filter((name) => env[name]).map((name) => [name, env[name] as string]),
  );
  await runtime.buildImage({
    tag: image,
    context: tarStream(entries),
    containerfile: CONTAINERFILE,
    buildArgs,
    labels: { [BUILD_LABEL]: target(request) },
    onProgress,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  onProgress({ phase: 'done', image, message: `Built ${image} for ${target(request)}` });
  return image;
}

function target(request: ProtocolBuildRequest): string {
  return `${request.scheme}://${request.pkg}`;
}

/** A repository-safe name for the package (`@scope/pkg@1` → `scope-pkg-1`). */
function slug(pkg: string): string {
  const name = pkg
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80);
  return name === '' ? 'local' : name;
}
