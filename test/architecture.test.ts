/**
 * The layering of docs/architecture.md, enforced: every import in src/ (static, dynamic and
 * re-exports) stays within its folder's "may import" row, and no two folders import each other,
 * directly or around a cycle; inside src/proxy/, the same for its own folders ("Inside the
 * proxy"); and no file circle anywhere in src/. The tables are read from the document, so the
 * two cannot drift.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

/** The lines of one `## ` section of docs/architecture.md. */
function section(heading: string): string[] {
  const text = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
  const start = text.indexOf(`## ${heading}`);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end === -1 ? undefined : end).split('\n');
}

/** folder → what it may import, from a section's table (`| \`folder\` | job | may import |`). */
function layerTable(heading = 'Layers'): Map<string, Set<string>> {
  const table = new Map<string, Set<string>>();
  for (const line of section(heading)) {
    const cells = line.split('|').map((c) => c.trim());
    const folder = /^`([a-z]+)`$/.exec(cells[1] ?? '')?.[1];
    if (!folder || cells.length < 5) continue;
    const allowed = (cells[3] ?? '')
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean);
    table.set(folder, new Set(allowed));
  }
  return table;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Every relative import of a file, resolved to the imported file's path (`.ts`). */
function importsOf(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(IMPORT)].map((match) =>
    resolve(dirname(file), (match[1] as string).replace(/\.js$/, '.ts')),
  );
}

/** The circles of a graph (node → the nodes it reaches), each as the path around it. */
function circles(graph: ReadonlyMap<string, Iterable<string>>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (node: string, path: string[]): void => {
    if (state.get(node) === 'done' || !graph.has(node)) return;
    if (state.get(node) === 'open') {
      found.push([...path.slice(path.indexOf(node)), node]);
      return;
    }
    state.set(node, 'open');
    for (const next of graph.get(node) ?? []) visit(next, [...path, node]);
    state.set(node, 'done');
  };
  for (const node of graph.keys()) visit(node, []);
  return found;
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)'(\.{1,2}\/[^']+)'/gm;

/** Every import between folders: [from folder, to folder, the file that imports]. */
function folderImports(): Array<[string, string, string]> {
  const edges: Array<[string, string, string]> = [];
  for (const file of sourceFiles(src)) {
    const from = relative(src, file).split('/')[0] as string;
    for (const imported of importsOf(file)) {
      const target = relative(src, imported);
      const to = target.split('/')[0] as string;
      if (to.startsWith('..')) edges.push([from, `outside src (${target})`, relative(root, file)]);
      else if (to !== from) edges.push([from, to, relative(root, file)]);
    }
  }
  return edges;
}

describe('layering (docs/architecture.md)', () => {
  const table = layerTable();
  const edges = folderImports();

  it('lists every folder of src/', () => {
    const folders = readdirSync(src, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(folders.filter((f) => !table.has(f))).toEqual([]);
    expect(table.size).toBeGreaterThan(10);
  });

  it('has no import a folder may not make', () => {
    const broken = edges
      .filter(([from, to]) => !table.get(from)?.has(to))
      .map(([from, to, file]) => `${file}: ${from} → ${to}`);
    expect(broken).toEqual([]);
  });

  it('has no import cycle between folders', () => {
    const graph = new Map<string, Set<string>>();
    for (const [from, to] of edges) graph.set(from, (graph.get(from) ?? new Set()).add(to));
    const cycles = circles(graph).map((circle) => circle.join(' → '));
    expect(cycles).toEqual([]);
  });

  it('sees imports of every form (a check that finds nothing would pass anything)', () => {
    expect(edges.some(([from, to]) => from === 'proxy' && to === 'mcp')).toBe(true);
    // Dynamic imports count: the proxy loads Cedar only when configured.
    expect(
      edges.some(([from, to, file]) => from === 'proxy' && to === 'authz' && file.endsWith('chain.ts')),
    ).toBe(true);
  });
});

describe('layering inside src/proxy/ (docs/architecture.md, "Inside the proxy")', () => {
  const proxy = join(src, 'proxy');
  const table = layerTable('Inside the proxy');
  /** [from folder, imported path relative to src/proxy/, importing file] for imports between its folders. */
  const edges = sourceFiles(proxy).flatMap((file) => {
    const from = relative(proxy, file).split('/');
    return importsOf(file)
      .map((target) => relative(proxy, target))
      .filter((target) => !target.startsWith('..') && from.length > 1 && target.split('/')[0] !== from[0])
      .map((target) => [from[0] as string, target, relative(root, file)] as const);
  });

  it('lists every folder of src/proxy/', () => {
    const folders = readdirSync(proxy, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(folders.filter((f) => !table.has(f))).toEqual([]);
    expect(table.size).toBeGreaterThanOrEqual(6);
  });

  it("has no import a folder may not make (the root's types.ts aside)", () => {
    const allowed = (from: string, target: string): boolean =>
      target === 'types.ts' ||
      [...(table.get(from) ?? [])].some((entry) => target === entry || target.startsWith(`${entry}/`));
    const broken = edges
      .filter(([from, target]) => !allowed(from, target))
      .map(([from, target, file]) => `${file}: ${from} → ${target}`);
    expect(broken).toEqual([]);
    // The check reads real edges: the HTTP backend uses the era decision.
    expect(edges.some(([from, target]) => from === 'http' && target === 'eras/decision.ts')).toBe(true);
  });
});

describe('no file circle in src/', () => {
  it('finds no file that imports itself around a circle', () => {
    const graph = new Map(sourceFiles(src).map((file) => [file, importsOf(file)]));
    const found = circles(graph).map((circle) => circle.map((f) => relative(src, f)).join(' → '));
    expect(found).toEqual([]);
    expect(graph.size).toBeGreaterThan(100);
  });
});
