/**
 * The `aggregate` section of a RunConfig: a group of workloads served as one MCP endpoint
 * (`moat group serve`, docs/aggregation.md). The workload's proxy fronts an in-process aggregator
 * (src/aggregate/) that reaches each member through the member's own proxy.
 */
import * as z from 'zod';
import { DEFAULT_NAME_SEPARATOR, NAMING_STRATEGIES } from './defaults.js';

/** What a client sees of one backend's tool or prompt under the `manual` strategy. */
const manualEntrySchema = z.strictObject({
  /** The name clients see instead of the backend's own. */
  name: z.string().min(1).optional(),
  /** Never listed nor callable through the aggregate. */
  hidden: z.boolean().optional(),
});

const manualBackendSchema = z.strictObject({
  tools: z.record(z.string(), manualEntrySchema).optional(),
  prompts: z.record(z.string(), manualEntrySchema).optional(),
});

export { DEFAULT_NAME_SEPARATOR, NAMING_STRATEGIES };
export type NamingStrategy = (typeof NAMING_STRATEGIES)[number];

export const aggregateNamingSchema = z.strictObject({
  /**
   * `prefix` (default): every tool and prompt is named `<backend><separator><name>`, so adding a
   * backend never renames one. `priority`: names kept as they are; on a conflict the backend first
   * in `order` wins and the others' are shadowed (reported). `manual`: `overrides` rename or hide
   * per backend; conflicts left are prefixed and reported.
   */
  strategy: z.enum(NAMING_STRATEGIES).default('prefix'),
  separator: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,8}$/, 'must be 1-8 of the characters A-Z a-z 0-9 _ . -')
    .optional(),
  /** Backends (workload names) in priority order; the others follow by name. */
  order: z.array(z.string().min(1)).optional(),
  /** Per backend (workload name): tools and prompts renamed or hidden. */
  overrides: z.record(z.string(), manualBackendSchema).optional(),
});
export type AggregateNaming = z.infer<typeof aggregateNamingSchema>;

export const aggregateConfigSchema = z.strictObject({
  /** The group whose workloads are the backends (every kind; the aggregate itself excluded). */
  group: z.string().min(1),
  naming: aggregateNamingSchema.optional(),
});
export type AggregateConfig = z.infer<typeof aggregateConfigSchema>;
