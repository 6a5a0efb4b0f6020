/**
 * Building blocks shared by the CRD schemas. Each zod schema here is the one source of both the TypeScript type
 * and the CRD's OpenAPI schema, so constraints are declared once (see crd-manifest.ts for the conversion).
 */
import * as z from 'zod';
import { isPositiveDuration } from '../../config/defaults.js';

/** An int32 field: zod's int32 bounds plus the `format` the API server expects. */
export const int32 = () => z.int32().meta({ format: 'int32' });
/** An int64 field (the unsafe-integer bounds zod emits are removed by the manifest builder). */
export const int64 = () => z.int().meta({ format: 'int64' });

/** A cross-field rule, stated once as CEL for the API server and once as a predicate for TypeScript parsing. */
export interface CelRule<T> {
  rule: string;
  message: string;
  /** Field the API server names in the error, relative to the object the rule is on (for example `.address`). */
  fieldPath?: string;
  holds: (value: T) => boolean;
}

/** Attaches CEL rules (`x-kubernetes-validations`) and the same checks for zod parsing. */
export function withRules<S extends z.ZodType>(schema: S, rules: CelRule<z.output<S>>[]): S {
  return schema
    .superRefine((value, ctx) => {
      for (const { holds, message, fieldPath } of rules) {
        if (!holds(value)) {
          ctx.addIssue({ code: 'custom', message, path: fieldPath ? fieldPath.slice(1).split('.') : [] });
        }
      }
    })
    .meta({
      'x-kubernetes-validations': rules.map(({ rule, message, fieldPath }) =>
        fieldPath ? { rule, message, fieldPath } : { rule, message },
      ),
    });
}

/**
 * A positive Go duration ("30s", "5m", "1h30m"), as the RunConfig's duration fields take it: a
 * pattern and a CEL rule for the API server, the same check for zod parsing.
 */
export function positiveDuration() {
  return withRules(
    z
      .string()
      .max(64)
      .regex(/^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$/),
    [
      {
        rule: "duration(self) > duration('0s')",
        message: 'must be a positive duration such as 30s, 5m or 1h30m',
        holds: isPositiveDuration,
      },
    ],
  );
}

/**
 * A list the API server merges by key (`x-kubernetes-list-type: map`): items must be unique by those keys,
 * which zod parsing checks too.
 */
export function listMap<I extends z.ZodType>(
  item: I,
  keys: (keyof z.output<I> & string)[],
  maxItems: number,
) {
  return z
    .array(item)
    .max(maxItems)
    .superRefine((items, ctx) => {
      const seen = new Set<string>();
      items.forEach((value, index) => {
        const id = JSON.stringify(keys.map((k) => (value as Record<string, unknown>)[k]));
        if (seen.has(id))
          ctx.addIssue({ code: 'custom', message: `duplicate ${keys.join('/')} ${id}`, path: [index] });
        seen.add(id);
      });
    })
    .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': keys });
}

/** A list of unique strings (`x-kubernetes-list-type: set`). */
export function stringSet(item: z.ZodString, maxItems: number) {
  return z
    .array(item)
    .max(maxItems)
    .refine((items) => new Set(items).size === items.length, 'items must be unique')
    .meta({ 'x-kubernetes-list-type': 'set' });
}

/** Kubernetes object names (DNS subdomain): what a reference may name. */
export const objectName = () => z.string().min(1).max(253);

export const stringMap = () => z.record(z.string(), z.string());

/** A key in a Secret of the same namespace. */
export const secretKeyRefSchema = z.object({
  name: objectName().describe('Name of the Secret in the same namespace.'),
  key: z.string().min(1).max(253).describe('Key inside the Secret.'),
});
export type SecretKeyRef = z.output<typeof secretKeyRefSchema>;

/** A key in a ConfigMap of the same namespace holding a PEM CA bundle. */
export const caBundleRefSchema = z.object({
  name: objectName().describe('Name of the ConfigMap in the same namespace.'),
  key: z.string().min(1).max(253).default('ca.crt').describe('Key inside the ConfigMap; default ca.crt.'),
});
export type CaBundleRef = z.output<typeof caBundleRefSchema>;

/** HTTP header field name (RFC 9110 token), 1 to 255 characters. */
export const headerName = () =>
  z
    .string()
    .min(1)
    .max(255)
    .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/);

/** An http(s) URL. */
export const httpUrl = () =>
  z
    .string()
    .max(2048)
    .regex(/^https?:\/\/\S+$/);

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** metav1.Condition with the API server's own limits. */
export const conditionSchema = z.object({
  type: z
    .string()
    .max(316)
    .regex(
      /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/,
    )
    .describe('Type of condition in CamelCase, optionally prefixed by a DNS subdomain and a slash.'),
  status: z.enum(['True', 'False', 'Unknown']),
  observedGeneration: int64().min(0).optional(),
  lastTransitionTime: z
    .string()
    .refine((t) => RFC3339.test(t) && !Number.isNaN(Date.parse(t)), 'must be an RFC 3339 date-time')
    .meta({ format: 'date-time' })
    .describe('When the condition last changed status.'),
  reason: z
    .string()
    .min(1)
    .max(1024)
    .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/)
    .describe('CamelCase programmatic identifier of the last transition.'),
  message: z.string().max(32768).describe('Human-readable details; may be empty.'),
});
export type Condition = z.output<typeof conditionSchema>;

export const conditionsSchema = listMap(conditionSchema, ['type'], 64);

/** A workload that references a config object; listed in the config's status and blocks its deletion. */
export const workloadReferenceSchema = z.object({
  kind: z.enum(['MCPRemoteProxy']),
  name: objectName(),
});
export type WorkloadReference = z.output<typeof workloadReferenceSchema>;

/** Status shared by the referenced config kinds. */
export const configStatusSchema = z.object({
  conditions: conditionsSchema.optional(),
  observedGeneration: int64().min(0).optional().describe('Generation the status was computed from.'),
  configHash: z
    .string()
    .max(128)
    .optional()
    .describe('Hash of the spec; referencing proxies roll when it changes.'),
  referencingWorkloads: listMap(workloadReferenceSchema, ['kind', 'name'], 1024)
    .optional()
    .describe('Workloads in this namespace that reference this object; it cannot be deleted while any do.'),
});
export type ConfigStatus = z.output<typeof configStatusSchema>;
