/**
 * The guardrail config (`--guardrail-config FILE`, the RunConfig's `guardrail_config` section, the
 * MCPRemoteProxy's `spec.guardrails`), JSON or YAML:
 *
 *   to_server: block          # default action on what the client sends (tool arguments, …)
 *   to_client: redact         # default action on what the server sends (tool results, …)
 *   detectors:                # per detector: an action for both directions, or one per direction
 *     email: warn
 *     phone: off
 *     aws-access-key: { to_server: block, to_client: redact }
 *
 * Actions: `block`, `redact`, `warn` (audit only), `off`. A detector not named takes the defaults
 * (block towards the server, redact towards the client).
 */
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import * as z from 'zod';
import { describeIssues } from '../config/issues.js';
import { errorMessage, usageError } from '../util/errors.js';
import { DETECTORS } from './detectors.js';

export const ACTIONS = ['block', 'redact', 'warn', 'off'] as const;
export type Action = (typeof ACTIONS)[number];
export type Direction = 'to_server' | 'to_client';

const action = z.enum(ACTIONS);
const DETECTOR_IDS = DETECTORS.map((d) => d.id);

const guardrailConfigSchema = z.strictObject({
  version: z.string().optional(),
  to_server: action.optional(),
  to_client: action.optional(),
  detectors: z
    .record(
      z.string(),
      z.union([action, z.strictObject({ to_server: action.optional(), to_client: action.optional() })]),
    )
    .superRefine((detectors, ctx) => {
      for (const id of Object.keys(detectors)) {
        if (!DETECTOR_IDS.includes(id))
          ctx.addIssue({
            code: 'custom',
            path: [id],
            message: `unknown detector; known: ${DETECTOR_IDS.join(', ')}`,
          });
      }
    })
    .optional(),
});

export type GuardrailConfig = z.infer<typeof guardrailConfigSchema>;

/** Each direction's action per detector; detectors that are off are absent. */
export type GuardrailSettings = Record<Direction, ReadonlyMap<string, Exclude<Action, 'off'>>>;

export function parseGuardrailConfig(value: unknown, where: string): GuardrailSettings {
  const parsed = guardrailConfigSchema.safeParse(value ?? {});
  if (!parsed.success) throw usageError(`${where}: ${describeIssues(parsed.error)}`);
  const config = parsed.data;
  const settings: GuardrailSettings = { to_server: new Map(), to_client: new Map() };
  for (const direction of ['to_server', 'to_client'] as const) {
    const fallback = config[direction] ?? (direction === 'to_server' ? 'block' : 'redact');
    for (const id of DETECTOR_IDS) {
      const own = config.detectors?.[id];
      const chosen = (typeof own === 'string' ? own : own?.[direction]) ?? fallback;
      if (chosen !== 'off') (settings[direction] as Map<string, Exclude<Action, 'off'>>).set(id, chosen);
    }
  }
  return settings;
}

/** Reads --guardrail-config (JSON is YAML too). */
export async function loadGuardrailConfigFile(path: string): Promise<GuardrailSettings> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw usageError(`--guardrail-config: cannot read ${path}: ${errorMessage(err)}`);
  }
  let value: unknown;
  try {
    value = parse(text);
  } catch (err) {
    throw usageError(`--guardrail-config ${path}: not valid YAML or JSON: ${errorMessage(err)}`);
  }
  return parseGuardrailConfig(value, `--guardrail-config ${path}`);
}
