/**
 * Turns a kind's zod schemas into its CustomResourceDefinition (apiextensions.k8s.io/v1) and the YAML committed
 * in the Helm chart's crds/. zod's OpenAPI 3.0 output is nearly structural already; the rest is fixed up here,
 * and any construct the API server would refuse stops the generator instead of reaching a cluster.
 */
import { stringify } from 'yaml';
import * as z from 'zod';
import type { KindDefinition } from './kind.js';

export const CRD_DIRECTORY = 'deploy/helm/moat-operator/crds';

type JsonSchema = Record<string, unknown>;

/** Keywords a structural schema cannot hold (zod emits them for unions, nullables and records). */
const UNSUPPORTED = ['anyOf', 'oneOf', 'allOf', 'not', '$ref', '$defs', 'nullable', 'propertyNames', 'const'];

export function crdFileName(kind: KindDefinition): string {
  return `${kind.group}_${kind.plural}.yaml`;
}

/** The structural OpenAPI schema of one zod schema, as the API server wants it. */
export function structuralSchema(schema: z.ZodType, where: string): JsonSchema {
  const json = z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input' }) as JsonSchema;
  delete json.$schema;
  return fixNode(json, where);
}

function fixNode(node: JsonSchema, path: string): JsonSchema {
  for (const keyword of UNSUPPORTED) {
    if (keyword in node) throw new Error(`${path}: "${keyword}" is not allowed in a CRD schema`);
  }
  // zod bounds every int with the safe-integer range; int64 fields need no bound.
  if (node.maximum === Number.MAX_SAFE_INTEGER) delete node.maximum;
  if (node.minimum === Number.MIN_SAFE_INTEGER) delete node.minimum;
  if (node['x-kubernetes-preserve-unknown-fields'] === true) {
    delete node.properties;
    delete node.additionalProperties;
    return node;
  }
  if (node.type === undefined) throw new Error(`${path}: every schema node needs a type`);
  const properties = node.properties as Record<string, JsonSchema> | undefined;
  if (properties) {
    if (node.additionalProperties !== undefined) {
      throw new Error(`${path}: properties and additionalProperties are mutually exclusive`);
    }
    for (const [name, child] of Object.entries(properties)) fixNode(child, `${path}.${name}`);
  }
  const values = node.additionalProperties;
  if (values !== undefined) {
    if (typeof values !== 'object' || values === null || Object.keys(values).length === 0) {
      throw new Error(`${path}: a map needs a typed value schema`);
    }
    fixNode(values as JsonSchema, `${path}[*]`);
  }
  if (node.items) fixNode(node.items as JsonSchema, `${path}[]`);
  return node;
}

export function buildCrd(kind: KindDefinition): JsonSchema {
  const spec = structuralSchema(kind.spec, `${kind.kind}.spec`);
  const status = structuralSchema(kind.status, `${kind.kind}.status`);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${kind.plural}.${kind.group}`,
      labels: { 'app.kubernetes.io/part-of': 'moat' },
    },
    spec: {
      group: kind.group,
      names: {
        kind: kind.kind,
        listKind: kind.listKind,
        plural: kind.plural,
        singular: kind.singular,
        shortNames: kind.shortNames,
        categories: kind.categories,
      },
      scope: 'Namespaced',
      versions: [
        {
          name: kind.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: kind.printerColumns,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: `${kind.kind} (${kind.group}/${kind.version}).`,
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec,
                status,
              },
              ...(kind.specRequired ? { required: ['spec'] } : {}),
            },
          },
        },
      ],
    },
  };
}

export function renderCrdYaml(kind: KindDefinition): string {
  const header = '# Generated from src/operator/crd by `npm run gen:crds`. Do not edit by hand.\n';
  return (
    header + stringify(buildCrd(kind), { lineWidth: 0, singleQuote: true, aliasDuplicateObjects: false })
  );
}
