/** The fingerprint of a tool definition: what a client (and its model) is told about the tool. */
import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every depth, so equal definitions hash equally. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** sha256 of the tool's name, description and input schema (hex). */
export function toolHash(tool: Record<string, unknown>): string {
  const { name, description, inputSchema } = tool;
  return createHash('sha256').update(canonical({ name, description, inputSchema })).digest('hex');
}
