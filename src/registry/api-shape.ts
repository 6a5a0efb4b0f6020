/**
 * The MCP Registry API's answers (OpenAPI "MCP Server Registry API" 2025-12-01, the copy in
 * test/fixtures/registry-api/): `ServerList` (`{ servers: ServerResponse[], metadata: {
 * nextCursor, count } }`) and `ServerResponse` (`{ server: server.json, _meta: { official
 * registry metadata } }`). Shared by the client (api-client.ts) and `moat registry serve`.
 */
import * as z from 'zod';
import { describeIssues } from '../config/issues.js';
import { serverSchema, type RegistryServer } from './schema.js';

export const API_PREFIX = '/v0.1';
/** The `_meta` key of registry-managed metadata in a ServerResponse. */
export const OFFICIAL_META = 'io.modelcontextprotocol.registry/official';

export const STATUSES = ['active', 'deprecated', 'deleted'] as const;
export type EntryStatus = (typeof STATUSES)[number];

const officialMeta = z.looseObject({
  status: z.enum(STATUSES).optional(),
  statusMessage: z.string().optional(),
  publishedAt: z.string().optional(),
  updatedAt: z.string().optional(),
  isLatest: z.boolean().optional(),
});

/** A ServerResponse before its server is checked: a bad entry must not spoil a whole page. */
const rawResponse = z.looseObject({
  server: z.looseObject({ name: z.string() }),
  _meta: z.looseObject({ [OFFICIAL_META]: officialMeta.optional() }).optional(),
});

export const serverListSchema = z.looseObject({
  servers: z.array(rawResponse),
  metadata: z
    .looseObject({ nextCursor: z.string().nullable().optional(), count: z.number().optional() })
    .optional(),
});
export const serverResponseSchema = rawResponse;

export type RawServerResponse = z.infer<typeof rawResponse>;

/** A registry entry with the status the registry gives it (files and the catalog: active). */
export interface RegistryEntry {
  server: RegistryServer;
  status: EntryStatus;
  statusMessage?: string;
  isLatest?: boolean;
  publishedAt?: string;
}

/** One ServerResponse as an entry, or the reason Moat cannot use its server. */
export function entryFromResponse(item: RawServerResponse): RegistryEntry | { invalid: string } {
  const parsed = serverSchema.safeParse(item.server);
  if (!parsed.success) return { invalid: `${item.server.name}: ${describeIssues(parsed.error)}` };
  const meta = item._meta?.[OFFICIAL_META];
  return {
    server: parsed.data,
    status: meta?.status ?? 'active',
    ...(meta?.statusMessage !== undefined ? { statusMessage: meta.statusMessage } : {}),
    ...(meta?.isLatest !== undefined ? { isLatest: meta.isLatest } : {}),
    ...(meta?.publishedAt !== undefined ? { publishedAt: meta.publishedAt } : {}),
  };
}
