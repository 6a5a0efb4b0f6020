/**
 * The authorization config file (--authz-config), in ToolHive's format so policy files move
 * between the tools:
 *
 *   version: "1.0"
 *   type: cedarv1
 *   cedar:
 *     policies: ['permit(principal, action == Action::"call_tool", resource == Tool::"weather");']
 *     entities_json: "[]"            # optional static entities (for transitive `in`)
 *     group_claim_name: groups        # optional; else groups, roles, cognito:groups
 *     role_claim_name: realm_roles    # optional; added to the groups
 *     group_entity_type: MoatGroup    # optional; THVGroup for ToolHive policies
 *
 * JSON or YAML. Every mistake is a start-up error naming the field (and the line, for policies).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { extname } from 'node:path';
import type { Document, LineCounter, parseDocument } from 'yaml';
import * as z from 'zod';
import { describeIssues } from '../config/issues.js';
import { errorMessage, usageError } from '../util/errors.js';

export const DEFAULT_GROUP_ENTITY_TYPE = 'MoatGroup';

const ENTITY_TYPE = /^[A-Za-z_][A-Za-z0-9_]*$/;

const cedarSchema = z.strictObject({
  policies: z.array(z.string().min(1, 'a policy must not be empty')).min(1, 'needs at least one policy'),
  entities_json: z.string().optional(),
  group_claim_name: z.string().max(253).optional(),
  role_claim_name: z.string().max(253).optional(),
  group_entity_type: z
    .string()
    .max(63)
    .regex(ENTITY_TYPE, 'must be a plain entity type name like MoatGroup (no namespaces)')
    .optional(),
  /** ToolHive: only meaningful with its embedded auth server (deprecated); accepted, ignored with a warning. */
  primary_upstream_provider: z.string().optional(),
  multi_valued_claims: z
    .array(z.string())
    .max(0, 'multi_valued_claims is not implemented yet in this version of moat; remove it')
    .optional(),
});

export const authzConfigSchema = z.strictObject({
  version: z.string().optional(),
  type: z.literal('cedarv1', {
    error: (issue) =>
      issue.input === 'httpv1'
        ? 'type httpv1 (an external policy decision point) is not implemented yet in this version of moat; use cedarv1'
        : 'must be cedarv1',
  }),
  cedar: cedarSchema,
});

export type AuthzConfig = z.infer<typeof authzConfigSchema>;

/** Where each policy starts in the file, for error messages (1-based line). */
export interface PolicyLocations {
  source: string;
  lines: Array<number | undefined>;
}

export interface LoadedAuthzConfig {
  config: AuthzConfig;
  locations: PolicyLocations;
}

/** Reads and validates --authz-config. */
export async function loadAuthzConfigFile(path: string): Promise<LoadedAuthzConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw usageError(`--authz-config: cannot read ${path}: ${errorMessage(err)}`);
  }
  const ext = extname(path).toLowerCase();
  if (!['.json', '.yaml', '.yml'].includes(ext)) {
    throw usageError(`--authz-config: ${path} must be a .json, .yaml or .yml file`);
  }
  return parseAuthzConfig(text, path);
}

/**
 * yaml is loaded only for a config file: a RunConfig's authz_config is already parsed, and a proxy
 * that never reads YAML stays without its ~70 modules (about 1 MB resident). yaml's Node build is
 * CommonJS, so it loads synchronously here.
 */
const requireYaml = () =>
  createRequire(import.meta.url)('yaml') as {
    LineCounter: typeof LineCounter;
    parseDocument: typeof parseDocument;
  };

/** Parses JSON or YAML text (JSON is YAML) and validates it. */
export function parseAuthzConfig(text: string, source: string): LoadedAuthzConfig {
  const { LineCounter, parseDocument } = requireYaml();
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const syntaxError = doc.errors[0];
  if (syntaxError) {
    const pos = lineCounter.linePos(syntaxError.pos[0]);
    const where = ` (line ${pos.line}, column ${pos.col})`;
    throw usageError(`authorization config ${source}${where}: ${syntaxError.message.split('\n')[0]}`);
  }
  const config = validateAuthzConfig(doc.toJS() as unknown, source);
  return {
    config,
    locations: { source, lines: policyLines(doc, lineCounter, config.cedar.policies.length) },
  };
}

/** Validates an already-parsed config (e.g. RunConfig.authz_config). */
export function validateAuthzConfig(value: unknown, source: string): AuthzConfig {
  const result = authzConfigSchema.safeParse(value);
  if (!result.success) throw usageError(`authorization config ${source}: ${describeIssues(result.error)}`);
  return result.data;
}

function policyLines(doc: Document, counter: LineCounter, count: number): Array<number | undefined> {
  const lines: Array<number | undefined> = [];
  for (let i = 0; i < count; i++) {
    const node = doc.getIn(['cedar', 'policies', i], true) as
      { range?: [number, number, number] } | undefined;
    lines.push(node?.range ? counter.linePos(node.range[0]).line : undefined);
  }
  return lines;
}
