/** The adapter for each file format. */
import type { FileFormat } from '../types.js';
import type { FormatAdapter } from './adapter.js';
import { jsonAdapter } from './json.js';
import { tomlAdapter } from './toml.js';
import { yamlAdapter } from './yaml.js';

const ADAPTERS: Record<FileFormat, FormatAdapter> = {
  json: jsonAdapter(false),
  jsonc: jsonAdapter(true),
  toml: tomlAdapter,
  yaml: yamlAdapter,
};

export function adapterFor(format: FileFormat): FormatAdapter {
  return ADAPTERS[format];
}

export type { FormatAdapter } from './adapter.js';
