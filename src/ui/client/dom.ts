/**
 * The only way the client builds DOM: elements with text set through textContent and attributes
 * from a fixed list, so nothing a workload or an MCP server controls is ever parsed as HTML.
 */

type Child = Node | string | null | undefined | false;

/** Attributes that cannot carry script or a URL: anything else is refused. */
const SAFE_ATTRIBUTES = new Set([
  'class',
  'id',
  'role',
  'type',
  'name',
  'value',
  'for',
  'title',
  'placeholder',
  'autocomplete',
  'colspan',
  'scope',
  'datetime',
  'aria-label',
  'aria-live',
  'aria-current',
  'aria-describedby',
  'aria-busy',
  'data-workload',
  'data-state',
  'data-entry',
  'required',
]);

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (!SAFE_ATTRIBUTES.has(name)) throw new Error(`attribute ${name} is not allowed here`);
    node.setAttribute(name, value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

/** A link inside the dashboard: only paths of its own, never a URL a server named. */
export function localLink(path: string, text: string): HTMLAnchorElement {
  if (!path.startsWith('/') || path.startsWith('//')) throw new Error('only dashboard paths are linked');
  const a = el('a', {}, text);
  a.href = path;
  return a;
}

export function button(
  text: string,
  onClick: () => void,
  attributes: Record<string, string> = {},
): HTMLButtonElement {
  const b = el('button', { type: 'button', ...attributes }, text);
  b.addEventListener('click', onClick);
  return b;
}
