/** The identity of a custom resource kind and the schemas its CRD is generated from. */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import type * as z from 'zod';

export const API_GROUP = 'moat.dev';
export const API_VERSION = 'v1beta1';
export const API_GROUP_VERSION = `${API_GROUP}/${API_VERSION}`;
export const CATEGORY = 'moat';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

export interface KindDefinition<Spec extends z.ZodType = z.ZodType, Status extends z.ZodType = z.ZodType> {
  group: typeof API_GROUP;
  version: typeof API_VERSION;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  categories: string[];
  printerColumns: PrinterColumn[];
  /** Whether `spec` must be present (a kind whose spec has a required field). */
  specRequired: boolean;
  spec: Spec;
  status: Status;
}

const validColumn: PrinterColumn = {
  name: 'Valid',
  type: 'string',
  jsonPath: ".status.conditions[?(@.type=='Valid')].status",
};
const ageColumn: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

export function defineKind<Spec extends z.ZodType, Status extends z.ZodType>(options: {
  kind: string;
  plural: string;
  shortNames: string[];
  /** Columns before `Valid` and `Age` (config kinds) or the full list (`standardColumns: false`). */
  columns?: PrinterColumn[];
  standardColumns?: boolean;
  specRequired: boolean;
  spec: Spec;
  status: Status;
}): KindDefinition<Spec, Status> {
  const columns = options.columns ?? [];
  return {
    group: API_GROUP,
    version: API_VERSION,
    kind: options.kind,
    listKind: `${options.kind}List`,
    plural: options.plural,
    singular: options.kind.toLowerCase(),
    shortNames: options.shortNames,
    categories: [CATEGORY],
    printerColumns: options.standardColumns === false ? columns : [...columns, validColumn, ageColumn],
    specRequired: options.specRequired,
    spec: options.spec,
    status: options.status,
  };
}

/** A stored custom object: `spec` and `status` as parsed (defaults applied). */
export interface CustomResource<Spec, Status> {
  apiVersion: typeof API_GROUP_VERSION;
  kind: string;
  metadata: V1ObjectMeta;
  spec: Spec;
  status?: Status;
}
