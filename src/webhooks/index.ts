/** Webhook policies from a RunConfig's validating_webhooks and mutating_webhooks (merged by the CLI). */
import type { RunConfig } from '../config/runconfig.js';
import { createWebhookClient, type ClientOptions, type WebhookClient } from './client.js';
import { createMutatingPolicy, createValidatingPolicy } from './policy.js';
import type { MessagePolicy } from '../mcp/policy.js';

export interface Webhooks {
  /** Mutating first, then validating (either may be absent). */
  policies: MessagePolicy[];
  close(): Promise<void>;
}

export async function createWebhooks(
  config: Pick<RunConfig, 'validating_webhooks' | 'mutating_webhooks'>,
  options: ClientOptions = {},
): Promise<Webhooks | undefined> {
  const mutating = config.mutating_webhooks ?? [];
  const validating = config.validating_webhooks ?? [];
  if (mutating.length === 0 && validating.length === 0) return undefined;
  const clients: WebhookClient[] = [];
  try {
    for (const hook of [...mutating, ...validating]) clients.push(await createWebhookClient(hook, options));
  } catch (err) {
    await Promise.all(clients.map((c) => c.close()));
    throw err;
  }
  const policies: MessagePolicy[] = [];
  if (mutating.length > 0) policies.push(createMutatingPolicy(clients.slice(0, mutating.length)));
  if (validating.length > 0) policies.push(createValidatingPolicy(clients.slice(mutating.length)));
  return { policies, close: async () => void (await Promise.all(clients.map((c) => c.close()))) };
}
