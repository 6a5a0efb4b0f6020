/**
 * File formats that `moat run` reads into the RunConfig when it is built: the tools-override
 * file and webhook configuration files. Parsers take the text (the
 * caller reads the file) and report bad fields by path.
 */
import { createRequire } from 'node:module';
import type { parse as yamlParse } from 'yaml';
import * as z from 'zod';
import { NS_PER_MS, parseDuration } from '../util/duration.js';
import { DEFAULTS } from './defaults.js';
import { errorMessage, usageError } from '../util/errors.js';
import { aggregateNamingSchema, type AggregateNaming } from './aggregate.js';
import { describeIssues } from './issues.js';
import { toolOverrideSchema, webhookSchema, type ToolOverride, type Webhook } from './runconfig.js';

/**
 * The YAML parser, required when a webhook file is read: `moat run` without one starts without
 * it. yaml's Node build is CommonJS, so it loads synchronously here.
 */
const parseYaml = (text: string): unknown =>
  (createRequire(import.meta.url)('yaml') as { parse: typeof yamlParse }).parse(text);

function parseJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw usageError(`${source}: not valid JSON: ${errorMessage(err)}`);
  }
}

function validate<T>(schema: z.ZodType<T>, data: unknown, source: string): T {
  const result = schema.safeParse(data);
  if (!result.success) throw usageError(`${source}: ${describeIssues(result.error)}`);
  return result.data;
}

const toolsOverrideFileSchema = z.strictObject({
  toolsOverride: z.record(
    z.string(),
    toolOverrideSchema.refine((o) => Boolean(o.name) || Boolean(o.description), {
      message: 'a tool override needs a name or a description',
    }),
  ),
});

/** `{"toolsOverride": {"fetch": {"name": "web_fetch", "description": "..."}}}` (ToolHive's format). */
export function parseToolsOverride(text: string, source: string): Record<string, ToolOverride> {
  const file = validate(toolsOverrideFileSchema, parseJson(text, source), source);
  if (Object.keys(file.toolsOverride).length === 0) throw usageError(`${source}: toolsOverride is empty`);
  return file.toolsOverride;
}

const webhookTimeout = z.union([z.string(), z.number().int()]).transform((value, ctx) => {
  // A number is nanoseconds, as ToolHive writes it; a string is a duration ("5s").
  const ms = typeof value === 'number' ? value / NS_PER_MS : parseDuration(value);
  if (ms === undefined || ms < 1000 || ms > 30_000) {
    ctx.addIssue({ code: 'custom', message: 'expected a duration from 1s to 30s (or nanoseconds)' });
    return z.NEVER;
  }
  return ms * NS_PER_MS;
});

const webhookEntrySchema = webhookSchema
  .extend({ timeout: webhookTimeout.optional() })
  .refine((w) => w.url.startsWith('https://') || w.tls_config?.insecure_skip_verify === true, {
    message: 'url must use https:// (or set tls_config.insecure_skip_verify)',
    path: ['url'],
  });

const webhookFileSchema = z.strictObject({
  validating: z.array(webhookEntrySchema).optional(),
  mutating: z.array(webhookEntrySchema).optional(),
});

export interface WebhookSet {
  validating: Webhook[];
  mutating: Webhook[];
}

/** Merges webhook files (YAML or JSON) in order; a later entry with the same name replaces one. */
export function parseWebhookFiles(files: readonly { path: string; text: string }[]): WebhookSet {
  const validating = new Map<string, Webhook>();
  const mutating = new Map<string, Webhook>();
  for (const { path, text } of files) {
    let data: unknown;
    try {
      data = parseYaml(text);
    } catch (err) {
      throw usageError(`${path}: not valid YAML or JSON: ${errorMessage(err)}`);
    }
    const file = validate(webhookFileSchema, data ?? {}, path);
    for (const w of file.validating ?? []) validating.set(w.name, withDefaultTimeout(w));
    for (const w of file.mutating ?? []) mutating.set(w.name, withDefaultTimeout(w));
  }
  return { validating: [...validating.values()], mutating: [...mutating.values()] };
}

function withDefaultTimeout(w: Webhook): Webhook {
  return { ...w, timeout: w.timeout ?? DEFAULTS.webhookTimeoutMs * NS_PER_MS };
}

/**
 * The `--naming-config` file of `moat group serve` (YAML or JSON): per backend (workload name),
 * tools and prompts renamed or hidden, the `overrides` of the `manual` naming strategy:
 * `overrides: {time: {tools: {now: {name: clock}}, prompts: {noisy: {hidden: true}}}}`.
 */
export function parseNamingOverrides(
  text: string,
  source: string,
): NonNullable<AggregateNaming['overrides']> {
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (err) {
    throw usageError(`${source}: not valid YAML or JSON: ${errorMessage(err)}`);
  }
  const naming = validate(aggregateNamingSchema.pick({ overrides: true }), data, source);
  const overrides = naming.overrides ?? {};
  if (Object.keys(overrides).length === 0) throw usageError(`${source}: overrides is missing or empty`);
  return overrides;
}
