/** The message policies a RunConfig asks for, in chain order; empty when none is configured. */
import type { RunConfig } from '../../config/runconfig.js';
import { createToolFilter } from './tool-filter.js';
import type { MessagePolicy } from '../../mcp/policy.js';

export function buildPolicies(config: Pick<RunConfig, 'tools_filter' | 'tools_override'>): MessagePolicy[] {
  const policies: MessagePolicy[] = [];
  const toolFilter = createToolFilter(config.tools_filter, config.tools_override);
  if (toolFilter) policies.push(toolFilter);
  return policies;
}
