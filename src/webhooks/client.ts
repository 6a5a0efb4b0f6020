/**
 * Calls one webhook: POSTs the review request (≤ 1 MiB) with the configured timeout, TLS
 * settings and optional HMAC signature, and reads the review response (≤ 1 MiB).
 *
 * HMAC: `X-Moat-Timestamp: <unix seconds>` and `X-Moat-Signature: sha256=<hex>` over
 * `<timestamp>.<body>`; the ToolHive header names (`X-ToolHive-*`) are sent too, so receivers
 * written for ToolHive keep working.
 */
import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import type { Dispatcher } from 'undici';
import { webhookTimeoutMs } from '../config/derived.js';
import type { Webhook } from '../config/runconfig.js';
import { errorMessage, usageError } from '../util/errors.js';
import { UndiciAgent, undiciRequest } from '../util/undici-parts.js';

export const WEBHOOK_PROTOCOL_VERSION = 'v0.1.0';
const MAX_BYTES = 1024 * 1024;

export interface WebhookReview {
  version?: string;
  uid?: string;
  allowed: boolean;
  code?: number;
  message?: string;
  reason?: string;
  details?: unknown;
  patch_type?: string;
  patch?: unknown;
}

/** The webhook could not be asked, or answered something unusable. */
export class WebhookCallError extends Error {
  override readonly name = 'WebhookCallError';
  constructor(
    message: string,
    /** HTTP status of the webhook's answer, when it answered. */
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface WebhookClient {
  readonly name: string;
  readonly failurePolicy: 'fail' | 'ignore';
  call(body: Record<string, unknown>): Promise<WebhookReview>;
  close(): Promise<void>;
}

export interface ClientOptions {
  /** Resolves a secret name ("NAME" or "NAME,target=x") to its value. */
  resolveSecret?: (ref: string) => Promise<string>;
}

export async function createWebhookClient(
  hook: Webhook,
  options: ClientOptions = {},
): Promise<WebhookClient> {
  const where = `webhook ${JSON.stringify(hook.name)}`;
  const tls = hook.tls_config ?? {};
  const readPem = async (path: string | undefined, field: string): Promise<string | undefined> => {
    if (!path) return undefined;
    try {
      return await readFile(path, 'utf8');
    } catch (err) {
      throw usageError(`${where}: tls_config.${field}: cannot read ${path}: ${errorMessage(err)}`);
    }
  };
  const agent = new UndiciAgent({
    connect: {
      ca: await readPem(tls.ca_bundle_path, 'ca_bundle_path'),
      cert: await readPem(tls.client_cert_path, 'client_cert_path'),
      key: await readPem(tls.client_key_path, 'client_key_path'),
      rejectUnauthorized: tls.insecure_skip_verify !== true,
    },
  });
  const secret = hook.hmac_secret_ref ? await hmacSecret(hook.hmac_secret_ref, where, options) : undefined;
  const timeoutMs = webhookTimeoutMs(hook);

  return {
    name: hook.name,
    failurePolicy: hook.failure_policy ?? 'fail',
    async call(review) {
      const body = JSON.stringify(review);
      if (Buffer.byteLength(body) > MAX_BYTES) throw new WebhookCallError('the request is larger than 1 MiB');
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/json',
      };
      if (secret) {
        const timestamp = String(Math.floor(Date.now() / 1000));
        const signature = `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
        Object.assign(headers, {
          'x-moat-timestamp': timestamp,
          'x-moat-signature': signature,
          'x-toolhive-timestamp': timestamp,
          'x-toolhive-signature': signature,
        });
      }
      let response: Dispatcher.ResponseData<unknown>;
      try {
        const target = new URL(hook.url);
        // Redirects are not followed (the request API never does): a 3xx is an answer that is not 200.
        response = await undiciRequest.call(agent, {
          origin: target.origin,
          path: `${target.pathname}${target.search}`,
          method: 'POST',
          headers,
          body,
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
        throw new WebhookCallError(timedOut ? `no answer within ${timeoutMs} ms` : errorMessage(err));
      }
      const text = await readCapped(response.body);
      if (response.statusCode !== 200) {
        throw new WebhookCallError(`answered HTTP ${response.statusCode}`, response.statusCode);
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new WebhookCallError('answered something that is not JSON', 200);
      }
      if (
        typeof parsed !== 'object' ||
        parsed === null ||
        typeof (parsed as WebhookReview).allowed !== 'boolean'
      ) {
        throw new WebhookCallError('answer has no boolean "allowed"', 200);
      }
      const answer = parsed as WebhookReview;
      if (answer.uid !== undefined && answer.uid !== review.uid) {
        throw new WebhookCallError('answer uid does not match the request uid', 200);
      }
      return answer;
    },
    close: () => agent.close(),
  };
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_BYTES) {
      body.destroy();
      throw new WebhookCallError('answer is larger than 1 MiB');
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** An absolute path is a file holding the secret; anything else names a secret. */
async function hmacSecret(ref: string, where: string, options: ClientOptions): Promise<string> {
  if (isAbsolute(ref)) {
    try {
      const value = (await readFile(ref, 'utf8')).trim();
      if (value === '') throw new Error('the file is empty');
      return value;
    } catch (err) {
      throw usageError(`${where}: hmac_secret_ref ${ref}: ${errorMessage(err)}`);
    }
  }
  if (!options.resolveSecret) {
    throw usageError(`${where}: hmac_secret_ref names a secret but no secrets provider is available`);
  }
  return options.resolveSecret(ref);
}
