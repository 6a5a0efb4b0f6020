/**
 * RFC 6902 JSON Patch, applied to a copy of the document. Mutating webhooks may only touch the
 * MCP request, so every `path` and `from` must lie under `/mcp_request/`.
 */

export interface PatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  from?: string;
  value?: unknown;
}

export class PatchError extends Error {
  override readonly name = 'PatchError';
}

const SCOPE = '/mcp_request/';

export function applyPatch<T>(document: T, operations: unknown, scope = SCOPE): T {
  if (!Array.isArray(operations)) throw new PatchError('patch must be an array of operations');
  let doc = structuredClone(document) as unknown;
  operations.forEach((raw, i) => {
    const op = checkOperation(raw, i, scope);
    doc = applyOne(doc, op, i);
  });
  return doc as T;
}

function checkOperation(raw: unknown, index: number, scope: string): PatchOperation {
  if (typeof raw !== 'object' || raw === null) throw new PatchError(`operation ${index} is not an object`);
  const op = raw as Record<string, unknown>;
  if (!['add', 'remove', 'replace', 'move', 'copy', 'test'].includes(op.op as string)) {
    throw new PatchError(`operation ${index}: unknown op ${JSON.stringify(op.op)}`);
  }
  for (const key of ['path', ...(op.op === 'move' || op.op === 'copy' ? ['from'] : [])]) {
    const pointer = op[key];
    if (typeof pointer !== 'string' || !pointer.startsWith(scope)) {
      throw new PatchError(`operation ${index}: ${key} must start with ${scope}`);
    }
  }
  if (['add', 'replace', 'test'].includes(op.op as string) && !('value' in op)) {
    throw new PatchError(`operation ${index}: ${String(op.op)} needs a value`);
  }
  return op as unknown as PatchOperation;
}

function parsePointer(pointer: string): string[] {
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

type Container = Record<string, unknown> | unknown[];

/** The parent container of the pointer's target and the final token. */
function locate(doc: unknown, pointer: string, index: number): { parent: Container; key: string } {
  const tokens = parsePointer(pointer);
  const key = tokens.pop() as string;
  let node = doc;
  for (const token of tokens) {
    node = child(node, token, index, pointer);
  }
  if (typeof node !== 'object' || node === null)
    throw new PatchError(`operation ${index}: ${pointer} has no parent`);
  return { parent: node as Container, key };
}

function child(node: unknown, token: string, index: number, pointer: string): unknown {
  if (Array.isArray(node)) {
    const i = arrayIndex(token, node.length - 1, index, pointer);
    return node[i];
  }
  if (typeof node === 'object' && node !== null && Object.hasOwn(node, token)) {
    return (node as Record<string, unknown>)[token];
  }
  throw new PatchError(`operation ${index}: ${pointer} does not exist`);
}

function arrayIndex(token: string, max: number, index: number, pointer: string): number {
  if (!/^(0|[1-9]\d*)$/.test(token) || Number(token) > max) {
    throw new PatchError(`operation ${index}: ${pointer}: bad array index ${token}`);
  }
  return Number(token);
}

function get(doc: unknown, pointer: string, index: number): unknown {
  const { parent, key } = locate(doc, pointer, index);
  return child(parent, key, index, pointer);
}

function remove(doc: unknown, pointer: string, index: number): unknown {
  const { parent, key } = locate(doc, pointer, index);
  const value = child(parent, key, index, pointer);
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else delete parent[key];
  return value;
}

function add(doc: unknown, pointer: string, value: unknown, index: number, replace: boolean): void {
  const { parent, key } = locate(doc, pointer, index);
  if (Array.isArray(parent)) {
    if (replace) parent[arrayIndex(key, parent.length - 1, index, pointer)] = value;
    else if (key === '-') parent.push(value);
    else parent.splice(arrayIndex(key, parent.length, index, pointer), 0, value);
    return;
  }
  if (replace && !Object.hasOwn(parent, key))
    throw new PatchError(`operation ${index}: ${pointer} does not exist`);
  parent[key] = value;
}

function applyOne(doc: unknown, op: PatchOperation, index: number): unknown {
  switch (op.op) {
    case 'add':
      add(doc, op.path, structuredClone(op.value), index, false);
      break;
    case 'replace':
      add(doc, op.path, structuredClone(op.value), index, true);
      break;
    case 'remove':
      remove(doc, op.path, index);
      break;
    case 'move': {
      if (op.path.startsWith(`${op.from as string}/`)) {
        throw new PatchError(`operation ${index}: cannot move a value into itself`);
      }
      const value = remove(doc, op.from as string, index);
      add(doc, op.path, value, index, false);
      break;
    }
    case 'copy':
      add(doc, op.path, structuredClone(get(doc, op.from as string, index)), index, false);
      break;
    case 'test':
      if (!deepEqual(get(doc, op.path, index), op.value)) {
        throw new PatchError(`operation ${index}: test failed at ${op.path}`);
      }
      break;
  }
  return doc;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every(
      (k) =>
        Object.hasOwn(b, k) &&
        deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
    )
  );
}
