/**
 * Guardrails from a RunConfig's `guardrail_config` (inline) or `guardrail_config_path` (a file):
 * the policy, or undefined when neither is set. The chain imports this module only then.
 */
import type { Logger } from 'pino';
import type { RunConfig } from '../config/runconfig.js';
import type { MessagePolicy } from '../mcp/policy.js';
import { loadGuardrailConfigFile, parseGuardrailConfig } from './config.js';
import { createGuardrailPolicy } from './policy.js';

export async function loadGuardrails(config: RunConfig, logger: Logger): Promise<MessagePolicy | undefined> {
  const settings =
    config.guardrail_config_path !== undefined
      ? await loadGuardrailConfigFile(config.guardrail_config_path)
      : config.guardrail_config !== undefined
        ? parseGuardrailConfig(config.guardrail_config, 'guardrail_config')
        : undefined;
  return settings && createGuardrailPolicy(settings, logger);
}
