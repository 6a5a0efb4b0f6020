/**
 * Overlays that hide ignored paths inside the container: every path of a mounted directory that
 * matches its ignore patterns (ignore-files.ts) is covered, a directory by an empty read-only
 * tmpfs, a file by a read-only bind of an empty file Moat owns. Resolved when the container is
 * created, from what is on disk then.
 *
 * Symlinks: the walk never follows one (a link may point anywhere on the host). A matching link
 * is hidden by covering what it points at, when that is visible in the container through some
 * mount; a link to a path no mount shows reveals nothing, since the container resolves links in
 * its own filesystem, where every ignored path is already covered.
 */
import {
  chmodSync,
  closeSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  type Stats,
} from 'node:fs';
import { dirname, join, posix, relative, sep } from 'node:path';
import ignore from 'ignore';
import type { RunConfig } from '../config/runconfig.js';
import { usageError } from '../util/errors.js';
import { moatDirs } from '../util/paths.js';
import { globalIgnoreFile, patternsFor, readIgnorePatterns } from './ignore-files.js';
import type { BindMount, ContainerSpec } from './types.js';

/** `ignore_config` of a RunConfig (ToolHive's PascalCase keys). */
export type IgnoreConfig = RunConfig['ignore_config'];

export interface Overlay {
  kind: 'directory' | 'file';
  /** The hidden path inside the container. */
  target: string;
}

export interface OverlayOptions {
  /** Patterns applied to every mounted directory (the global ignore file), before its own. */
  globalPatterns: readonly string[];
  /** Entries examined per mount before giving up (a mounted home directory would take minutes). */
  maxEntries?: number;
}

const MAX_ENTRIES = 200_000;

/** A mount as seen on the host with links resolved, so link targets can be mapped back. */
interface RealMount {
  real: string;
  target: string;
}

function realMounts(mounts: readonly BindMount[]): RealMount[] {
  return mounts.flatMap((m) => {
    try {
      return [{ real: realpathSync(m.source), target: m.target }];
    } catch {
      return []; // a missing source is reported by the engine's own check
    }
  });
}

function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** The container path showing a real host path: through the deepest mount that contains it. */
function containerPathOf(real: string, mounts: readonly RealMount[]): string | undefined {
  const owner = mounts
    .filter((m) => isInside(real, m.real))
    .sort((a, b) => b.target.length - a.target.length)[0];
  if (!owner) return undefined;
  const rel = relative(owner.real, real).split(sep).join('/');
  return rel === '' ? owner.target : posix.join(owner.target, rel);
}

/** A container path another (deeper) mount covers: the walk of this mount stops there. */
function coveredByOther(containerPath: string, own: string, mounts: readonly BindMount[]): boolean {
  return mounts.some(
    (m) => m.target !== own && m.target.length > own.length && isInside(containerPath, m.target),
  );
}

/** The overlays for every mounted directory with patterns; throws a usage error on a tree too big to check. */
export function resolveOverlays(mounts: readonly BindMount[], options: OverlayOptions): Overlay[] {
  const reals = realMounts(mounts);
  const found = new Map<string, Overlay>();
  const add = (overlay: Overlay) => found.set(overlay.target, overlay);
  for (const mount of mounts) {
    let root: string;
    try {
      root = realpathSync(mount.source);
      if (!statSync(root).isDirectory()) continue;
    } catch {
      continue;
    }
    const patterns = patternsFor(root, options.globalPatterns);
    if (patterns.length === 0) continue;
    walkMount(root, mount, mounts, reals, ignore().add(patterns), options.maxEntries ?? MAX_ENTRIES, add);
  }
  return [...found.values()].sort((a, b) => a.target.localeCompare(b.target));
}

function walkMount(
  root: string,
  mount: BindMount,
  mounts: readonly BindMount[],
  reals: readonly RealMount[],
  matcher: ReturnType<typeof ignore>,
  maxEntries: number,
  add: (overlay: Overlay) => void,
): void {
  let seen = 0;
  const pending = [''];
  for (let rel = pending.pop(); rel !== undefined; rel = pending.pop()) {
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      if (++seen > maxEntries)
        throw usageError(
          `${mount.source} (mounted at ${mount.target}) has more than ${maxEntries} entries to check against ` +
            'its ignore patterns; mount a smaller directory, or run with --ignore-globally=false if only the ' +
            'global ignore file applies to it',
        );
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
      const target = posix.join(mount.target, path);
      if (coveredByOther(target, mount.target, mounts)) continue;
      if (entry.isSymbolicLink()) {
        if (matcher.ignores(path)) hideLinkTarget(join(root, path), reals, add);
      } else if (entry.isDirectory()) {
        if (matcher.ignores(`${path}/`)) add({ kind: 'directory', target });
        else pending.push(path);
      } else if (matcher.ignores(path)) {
        add({ kind: 'file', target });
      }
    }
  }
}

function hideLinkTarget(link: string, reals: readonly RealMount[], add: (overlay: Overlay) => void): void {
  let real: string;
  try {
    real = realpathSync(link);
  } catch {
    return; // dangling on the host: it shows nothing of the host in the container either
  }
  const target = containerPathOf(real, reals);
  if (target === undefined) return;
  add({ kind: statSync(real).isDirectory() ? 'directory' : 'file', target });
}

/** --print-resolved-overlays: one line per hidden container path. */
export function overlaysReport(overlays: readonly Overlay[]): string {
  if (overlays.length === 0) return 'No ignored paths to hide in the container\n';
  return overlays
    .map((o) =>
      o.kind === 'directory'
        ? `Hiding ${o.target}/ (ignored directory: empty read-only tmpfs)\n`
        : `Hiding ${o.target} (ignored file: empty read-only file)\n`,
    )
    .join('');
}

/** The empty, read-only file bound over every hidden file (recreated if anything wrote to it). */
export function emptyOverlayFile(env: NodeJS.ProcessEnv = process.env): string {
  const file = join(moatDirs(env).data, 'overlays', 'empty');
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  let current: Stats | undefined;
  try {
    current = lstatSync(file);
  } catch {
    current = undefined;
  }
  // Anything but an empty regular file (written to, or replaced by a link) is removed, never followed.
  if (!(current?.isFile() && current.size === 0)) {
    rmSync(file, { force: true, recursive: true });
    closeSync(openSync(file, 'wx', 0o444));
  }
  chmodSync(file, 0o444);
  return file;
}

/** The spec with the overlays added: tmpfs over directories, the empty file bound over files. */
export function applyOverlays(
  spec: ContainerSpec,
  overlays: readonly Overlay[],
  emptyFile: string,
): ContainerSpec {
  if (overlays.length === 0) return spec;
  return {
    ...spec,
    mounts: [
      ...spec.mounts,
      ...overlays
        .filter((o) => o.kind === 'file')
        .map((o) => ({ source: emptyFile, target: o.target, readOnly: true })),
    ],
    tmpfs: [...(spec.tmpfs ?? []), ...overlays.filter((o) => o.kind === 'directory').map((o) => o.target)],
  };
}

/** The global patterns the RunConfig asks for (`ignore_config.LoadGlobal`, default true). */
export function globalPatterns(config: IgnoreConfig | undefined): string[] {
  return config?.LoadGlobal === false ? [] : readIgnorePatterns(globalIgnoreFile());
}

/** The overlays a spec's mounts need under the RunConfig's ignore settings. */
export function overlaysForSpec(
  spec: Pick<ContainerSpec, 'mounts'>,
  config: IgnoreConfig | undefined,
): Overlay[] {
  return resolveOverlays(spec.mounts, { globalPatterns: globalPatterns(config) });
}

/** The spec with every ignored path hidden: what the workload layer creates. */
export function withIgnoreOverlays(spec: ContainerSpec, config: IgnoreConfig | undefined): ContainerSpec {
  const overlays = overlaysForSpec(spec, config);
  return overlays.length === 0 ? spec : applyOverlays(spec, overlays, emptyOverlayFile());
}
