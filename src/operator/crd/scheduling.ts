/**
 * Pod scheduling shapes of `resourceOverrides.proxyDeployment` (Kubernetes core/v1 Toleration and Affinity),
 * with the API server's own emptiness rules as CEL so a bad term is rejected at apply time, not at pod creation.
 * Lists are bounded so the CEL cost estimate stays within the API server's budget.
 */
import * as z from 'zod';
import { int32, int64, stringMap, withRules, type CelRule } from './schema-parts.js';

const labelKey = () => z.string().min(1).max(317);
const labelValues = () => z.array(z.string().max(63)).max(64);

/** The value-count rules node and label selector requirements share (In/NotIn, Exists/DoesNotExist). */
const SET_OPERATOR_RULES: CelRule<{ operator: string; values?: string[] | undefined }>[] = [
  {
    rule: "!(self.operator in ['In', 'NotIn']) || (has(self.values) && size(self.values) > 0)",
    message: 'values must be non-empty when operator is In or NotIn',
    fieldPath: '.values',
    holds: (r) => !['In', 'NotIn'].includes(r.operator) || (r.values?.length ?? 0) > 0,
  },
  {
    rule: "!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0",
    message: 'values must be empty when operator is Exists or DoesNotExist',
    fieldPath: '.values',
    holds: (r) => !['Exists', 'DoesNotExist'].includes(r.operator) || (r.values?.length ?? 0) === 0,
  },
];

export const tolerationSchema = withRules(
  z.object({
    key: z
      .string()
      .max(317)
      .optional()
      .describe('Taint key; empty matches all keys, and then operator must be Exists.'),
    operator: z
      .enum(['Exists', 'Equal', 'Lt', 'Gt'])
      .default('Equal')
      .describe('Exists, Equal (default), Lt or Gt (numeric; needs a feature gate).'),
    value: z.string().max(63).optional().describe('Taint value; empty when operator is Exists.'),
    effect: z
      .enum(['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute'])
      .optional()
      .describe('Taint effect to match; empty matches all.'),
    tolerationSeconds: int64()
      .optional()
      .describe(
        'Only for NoExecute: how long the pod stays bound after the taint appears; unset means forever.',
      ),
  }),
  [
    {
      rule: "(has(self.key) && self.key != '') || self.operator == 'Exists'",
      message: 'operator must be Exists when key is empty',
      fieldPath: '.operator',
      holds: (t) => Boolean(t.key) || t.operator === 'Exists',
    },
    {
      rule: "self.operator != 'Exists' || !has(self.value) || self.value == ''",
      message: 'value must be empty when operator is Exists',
      fieldPath: '.value',
      holds: (t) => t.operator !== 'Exists' || !t.value,
    },
    {
      rule: "!has(self.tolerationSeconds) || (has(self.effect) && self.effect == 'NoExecute')",
      message: 'tolerationSeconds is allowed only with effect NoExecute',
      fieldPath: '.tolerationSeconds',
      holds: (t) => t.tolerationSeconds === undefined || t.effect === 'NoExecute',
    },
  ],
);
export type Toleration = z.output<typeof tolerationSchema>;

/** A node selector requirement: the value count depends on the operator. */
export const nodeSelectorRequirementSchema = withRules(
  z.object({
    key: labelKey(),
    operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']),
    values: labelValues().optional(),
  }),
  [
    ...SET_OPERATOR_RULES,
    {
      rule: "!(self.operator in ['Gt', 'Lt']) || (has(self.values) && size(self.values) == 1 && self.values[0].matches('^-?[0-9]+$'))",
      message: 'values must be a single integer when operator is Gt or Lt',
      fieldPath: '.values',
      holds: (r) =>
        !['Gt', 'Lt'].includes(r.operator) || (r.values?.length === 1 && /^-?[0-9]+$/.test(r.values[0]!)),
    },
  ],
);

export const nodeSelectorTermSchema = z.object({
  matchExpressions: z.array(nodeSelectorRequirementSchema).max(32).optional(),
  matchFields: z.array(nodeSelectorRequirementSchema).max(32).optional(),
});

/** A label selector requirement: In/NotIn need values, Exists/DoesNotExist must have none. */
export const labelSelectorRequirementSchema = withRules(
  z.object({
    key: labelKey(),
    operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
    values: labelValues().optional(),
  }),
  [...SET_OPERATOR_RULES],
);

export const labelSelectorSchema = z.object({
  matchLabels: stringMap().optional(),
  matchExpressions: z.array(labelSelectorRequirementSchema).max(32).optional(),
});
type LabelSelector = z.output<typeof labelSelectorSchema>;

function selectorHasKey(selector: LabelSelector, key: string): boolean {
  return key in (selector.matchLabels ?? {}) || (selector.matchExpressions ?? []).some((e) => e.key === key);
}

const labelKeyList = () => z.array(labelKey()).max(32).meta({ 'x-kubernetes-list-type': 'atomic' });

export const podAffinityTermSchema = withRules(
  z.object({
    topologyKey: z
      .string()
      .min(1)
      .max(317)
      .describe('Node label key whose value defines the topology domain.'),
    labelSelector: labelSelectorSchema.optional().describe('Pods this term selects; unset matches no pods.'),
    namespaceSelector: labelSelectorSchema.optional(),
    namespaces: z.array(z.string().max(63)).max(32).optional(),
    matchLabelKeys: labelKeyList().optional(),
    mismatchLabelKeys: labelKeyList().optional(),
  }),
  [
    {
      rule: 'has(self.labelSelector) || ((!has(self.matchLabelKeys) || size(self.matchLabelKeys) == 0) && (!has(self.mismatchLabelKeys) || size(self.mismatchLabelKeys) == 0))',
      message: 'matchLabelKeys and mismatchLabelKeys cannot be set when labelSelector is unset',
      holds: (t) =>
        t.labelSelector !== undefined ||
        ((t.matchLabelKeys ?? []).length === 0 && (t.mismatchLabelKeys ?? []).length === 0),
    },
    {
      rule: '!has(self.labelSelector) || !has(self.matchLabelKeys) || self.matchLabelKeys.all(k, !(has(self.labelSelector.matchLabels) && k in self.labelSelector.matchLabels) && !(has(self.labelSelector.matchExpressions) && self.labelSelector.matchExpressions.exists(e, e.key == k)))',
      message: 'a key in matchLabelKeys must not also appear in labelSelector',
      fieldPath: '.matchLabelKeys',
      holds: (t) =>
        !t.labelSelector || (t.matchLabelKeys ?? []).every((k) => !selectorHasKey(t.labelSelector!, k)),
    },
    {
      rule: '!has(self.labelSelector) || !has(self.mismatchLabelKeys) || self.mismatchLabelKeys.all(k, !(has(self.labelSelector.matchLabels) && k in self.labelSelector.matchLabels) && !(has(self.labelSelector.matchExpressions) && self.labelSelector.matchExpressions.exists(e, e.key == k)))',
      message: 'a key in mismatchLabelKeys must not also appear in labelSelector',
      fieldPath: '.mismatchLabelKeys',
      holds: (t) =>
        !t.labelSelector || (t.mismatchLabelKeys ?? []).every((k) => !selectorHasKey(t.labelSelector!, k)),
    },
    {
      rule: '!has(self.matchLabelKeys) || !has(self.mismatchLabelKeys) || self.matchLabelKeys.all(k, !(k in self.mismatchLabelKeys))',
      message: 'a key must not appear in both matchLabelKeys and mismatchLabelKeys',
      fieldPath: '.mismatchLabelKeys',
      holds: (t) => (t.matchLabelKeys ?? []).every((k) => !(t.mismatchLabelKeys ?? []).includes(k)),
    },
  ],
);

const weight = () =>
  int32().min(1).max(100).describe('Weight 1 to 100 added to (or subtracted from) a node score.');

const weightedPodAffinityTermSchema = z.object({ weight: weight(), podAffinityTerm: podAffinityTermSchema });

const podAffinitySchema = z.object({
  requiredDuringSchedulingIgnoredDuringExecution: z.array(podAffinityTermSchema).max(16).optional(),
  preferredDuringSchedulingIgnoredDuringExecution: z.array(weightedPodAffinityTermSchema).max(16).optional(),
});

export const affinitySchema = z.object({
  nodeAffinity: z
    .object({
      requiredDuringSchedulingIgnoredDuringExecution: z
        .object({
          nodeSelectorTerms: z
            .array(nodeSelectorTermSchema)
            .max(16)
            .meta({ 'x-kubernetes-list-type': 'atomic' }),
        })
        .optional(),
      preferredDuringSchedulingIgnoredDuringExecution: z
        .array(z.object({ weight: weight(), preference: nodeSelectorTermSchema }))
        .max(16)
        .optional(),
    })
    .optional(),
  podAffinity: podAffinitySchema.optional(),
  podAntiAffinity: podAffinitySchema.optional(),
});
export type Affinity = z.output<typeof affinitySchema>;
