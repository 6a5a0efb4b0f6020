/**
 * A Markdown reference of every field of every kind (type, required, default, constraints, rules), rendered from
 * the same structural schema as the CRD so the documentation cannot drift from what the API server enforces.
 */
import { structuralSchema } from './crd-manifest.js';
import type { KindDefinition } from './kind.js';

type Node = Record<string, unknown> & {
  type?: string;
  properties?: Record<string, Node>;
  required?: string[];
  items?: Node;
  additionalProperties?: Node;
  description?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  'x-kubernetes-validations'?: { message: string }[];
};

export const REFERENCE_DOCUMENT = 'docs/operator-resources.md';
export const REFERENCE_BEGIN = '<!-- BEGIN GENERATED FIELD REFERENCE (npm run gen:crds) -->';
export const REFERENCE_END = '<!-- END GENERATED FIELD REFERENCE -->';

interface Row {
  path: string;
  type: string;
  required: boolean;
  details: string[];
}

function typeOf(node: Node): string {
  if (node['x-kubernetes-preserve-unknown-fields']) return 'object (free-form)';
  if (node.type === 'array') return `${typeOf(node.items!)}[]`;
  if (node.type === 'object' && node.additionalProperties)
    return `map<string, ${typeOf(node.additionalProperties)}>`;
  return node.format ? `${node.type} (${node.format})` : String(node.type);
}

function code(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``;
}

function range(min: number | undefined, max: number | undefined, unit: string): string | undefined {
  if (max === undefined) return min === undefined ? undefined : `at least ${String(min)} ${unit}`;
  return min === undefined || min === 0
    ? `at most ${String(max)} ${unit}`
    : `${String(min)} to ${String(max)} ${unit}`;
}

function constraints(node: Node): string[] {
  const out: string[] = [];
  if (node.default !== undefined) out.push(`default ${code(node.default)}`);
  if (Array.isArray(node.enum)) out.push(`one of ${node.enum.map(code).join(', ')}`);
  if (node.minimum !== undefined || node.maximum !== undefined) {
    out.push(`${String(node.minimum ?? '…')} to ${String(node.maximum ?? '…')}`);
  }
  const length = range(node.minLength, node.maxLength, 'characters');
  if (length) out.push(length);
  const items = range(node.minItems, node.maxItems, 'items');
  if (items) out.push(items);
  if (node.pattern !== undefined) out.push(`pattern ${code(node.pattern)}`);
  if (node['x-kubernetes-list-type'] === 'map') {
    out.push(`unique by ${(node['x-kubernetes-list-map-keys'] as string[]).map(code).join(', ')}`);
  }
  if (node['x-kubernetes-list-type'] === 'set') out.push('unique items');
  for (const rule of node['x-kubernetes-validations'] ?? []) out.push(`rule: ${rule.message}`);
  if (node.description) out.push(node.description);
  return out;
}

function collect(node: Node, path: string, required: boolean, rows: Row[]): void {
  rows.push({ path, type: typeOf(node), required, details: [...constraints(node), ...itemDetails(node)] });
  const item = node.type === 'array' ? node.items! : node;
  const prefix = node.type === 'array' ? `${path}[]` : path;
  for (const [name, child] of Object.entries(item.properties ?? {})) {
    collect(child, `${prefix}.${name}`, (item.required ?? []).includes(name), rows);
  }
  if (node.type === 'array' && node.items?.type === 'array') collect(node.items, `${path}[]`, false, rows);
  const values = node.additionalProperties;
  if (values?.properties) {
    for (const [name, child] of Object.entries(values.properties)) {
      collect(child, `${path}.<key>.${name}`, (values.required ?? []).includes(name), rows);
    }
  }
}

/** Item-level details (rules on list items and map values) are folded into their parent row. */
function itemDetails(node: Node): string[] {
  const inner = node.type === 'array' ? node.items : node.additionalProperties;
  if (!inner) return [];
  const details =
    inner.type === 'object'
      ? (inner['x-kubernetes-validations'] ?? []).map((r) => `rule: ${r.message}`)
      : constraints(inner);
  return details.map((d) => `each: ${d}`);
}

function table(kind: KindDefinition, part: 'spec' | 'status'): string {
  const schema = structuralSchema(kind[part], part) as Node;
  const rows: Row[] = [];
  collect(schema, part, kind.specRequired && part === 'spec', rows);
  const lines = ['| Field | Type | Required | Default, constraints and meaning |', '|---|---|---|---|'];
  for (const row of rows) {
    const details = row.details.join('; ').replaceAll('|', '\\|');
    lines.push(`| \`${row.path}\` | ${row.type} | ${row.required ? 'yes' : 'no'} | ${details} |`);
  }
  return lines.join('\n');
}

export function renderFieldReference(kinds: readonly KindDefinition[]): string {
  const sections = kinds.map((kind) =>
    [
      `### ${kind.kind}`,
      '',
      `\`${kind.group}/${kind.version}\`, plural \`${kind.plural}\`, short names ${kind.shortNames.map(code).join(', ')}, ` +
        `category \`${kind.categories.join(', ')}\`; columns ${kind.printerColumns.map((c) => c.name).join(', ')}.`,
      '',
      table(kind, 'spec'),
      '',
      table(kind, 'status'),
    ].join('\n'),
  );
  return [REFERENCE_BEGIN, '', ...sections.flatMap((s) => [s, '']), REFERENCE_END].join('\n');
}

/** Replaces the generated section of a Markdown document, which must contain both markers. */
export function replaceFieldReference(document: string, reference: string): string {
  const begin = document.indexOf(REFERENCE_BEGIN);
  const end = document.indexOf(REFERENCE_END);
  if (begin < 0 || end < begin)
    throw new Error(`the document needs the markers ${REFERENCE_BEGIN} … ${REFERENCE_END}`);
  return document.slice(0, begin) + reference + document.slice(end + REFERENCE_END.length);
}
