/**
 * The layering of docs/architecture.md, enforced: every import in src/ (static, dynamic and
 * re-exports) stays within its folder's "may import" row, and no two folders import each other,
 * directly or around a cycle. The table is read from the document, so the two cannot drift.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

/** folder → folders it may import, from the "Layers" table. */
function layerTable(): Map<string, Set<string>> {
  const text = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
  const section = text.slice(text.indexOf('## Layers'));
  const table = new Map<string, Set<string>>();
  for (const line of section.split('\n')) {
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

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)'(\.{1,2}\/[^']+)'/gm;

/** Every import between folders: [from folder, to folder, the file that imports]. */
function folderImports(): Array<[string, string, string]> {
  const edges: Array<[string, string, string]> = [];
  for (const file of sourceFiles(src)) {
    const from = relative(src, file).split('/')[0] as string;
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const target = relative(src, resolve(dirname(file), match[1] as string));
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
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (node: string, path: string[]): void => {
      if (state.get(node) === 'done') return;
      if (state.get(node) === 'open') {
        cycles.push([...path.slice(path.indexOf(node)), node].join(' → '));
        return;
      }
      state.set(node, 'open');
      for (const next of graph.get(node) ?? []) visit(next, [...path, node]);
      state.set(node, 'done');
    };
    for (const node of graph.keys()) visit(node, []);
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
