/**
 * A form generated from a tool's input schema (JSON Schema, as the server sent it): one
 * labelled control per property (text, number, checkbox, a list for enums, JSON for objects and
 * arrays). Names, descriptions and enum values are the server's: set as text only.
 */
import { el } from './dom.js';

interface PropertySchema {
  type?: unknown;
  description?: unknown;
  enum?: unknown;
}

type Reader = () => unknown;

export interface SchemaForm {
  fields: HTMLElement;
  /** The arguments, or an error naming the field that is not valid. */
  values(): { ok: true; args: Record<string, unknown> } | { ok: false; message: string };
}

export function schemaForm(schema: unknown, idPrefix: string): SchemaForm {
  const { properties, required } = shape(schema);
  const readers = new Map<string, Reader>();
  const fields = el('div', { class: 'fields' });
  let index = 0;
  for (const [name, property] of Object.entries(properties)) {
    const id = `${idPrefix}-${index++}`;
    const label = el('label', { for: id }, name, required.has(name) ? ' (required)' : '');
    const [control, read] = controlFor(property, id, required.has(name));
    const help = typeof property.description === 'string' ? el('small', {}, property.description) : null;
    fields.append(el('div', { class: 'field' }, label, control, help));
    readers.set(name, read);
  }
  if (readers.size === 0) fields.append(el('p', {}, 'This tool takes no arguments.'));
  return {
    fields,
    values() {
      const args: Record<string, unknown> = {};
      for (const [name, read] of readers) {
        let value: unknown;
        try {
          value = read();
        } catch (err) {
          return { ok: false, message: `${name}: ${err instanceof Error ? err.message : String(err)}` };
        }
        if (value === undefined && required.has(name)) return { ok: false, message: `${name} is required` };
        if (value !== undefined) args[name] = value;
      }
      return { ok: true, args };
    },
  };
}

function shape(schema: unknown): { properties: Record<string, PropertySchema>; required: Set<string> } {
  const s = (typeof schema === 'object' && schema !== null ? schema : {}) as Record<string, unknown>;
  const properties = (
    typeof s.properties === 'object' && s.properties !== null ? s.properties : {}
  ) as Record<string, PropertySchema>;
  const required = new Set(Array.isArray(s.required) ? s.required.filter((r) => typeof r === 'string') : []);
  return { properties, required };
}

function controlFor(property: PropertySchema, id: string, required: boolean): [HTMLElement, Reader] {
  const type = Array.isArray(property.type)
    ? (property.type as unknown[]).find((t) => t !== 'null')
    : property.type;
  if (Array.isArray(property.enum)) {
    const select = el('select', { id, name: id });
    if (!required) select.append(el('option', { value: '' }, '(none)'));
    property.enum.forEach((v, i) => select.append(el('option', { value: String(i) }, JSON.stringify(v))));
    const values = property.enum as unknown[];
    return [select, () => (select.value === '' ? undefined : values[Number(select.value)])];
  }
  if (type === 'boolean') {
    const box = el('input', { id, name: id, type: 'checkbox' });
    return [box, () => box.checked];
  }
  if (type === 'number' || type === 'integer') {
    const input = el('input', { id, name: id, type: 'number' });
    if (type === 'integer') input.step = '1';
    return [
      input,
      () => {
        if (input.value === '') return undefined;
        const n = Number(input.value);
        if (!Number.isFinite(n) || (type === 'integer' && !Number.isInteger(n)))
          throw new Error(`expected ${type}`);
        return n;
      },
    ];
  }
  if (type === 'string' || type === undefined) {
    const input = el('input', { id, name: id, type: 'text', autocomplete: 'off' });
    return [input, () => (input.value === '' ? undefined : input.value)];
  }
  const area = el('textarea', { id, name: id, placeholder: type === 'array' ? '[ ]' : '{ }' });
  return [
    area,
    () => {
      if (area.value.trim() === '') return undefined;
      try {
        return JSON.parse(area.value) as unknown;
      } catch {
        throw new Error('expected JSON');
      }
    },
  ];
}
