/**
 * The server registry: the built-in catalog, the user's registry (a registry document or an MCP
 * Registry API, open.ts), lookup, search, run plans, and the API `moat registry serve` answers.
 */
export { closestNames, findServer, searchServers, shortName, splitVersion } from './lookup.js';
export { fillPlaceholders, placeholdersIn, planFor, type DeclaredInput, type RunPlan } from './plan.js';
export { moatSettings, type RegistryServer } from './schema.js';
export type { EntryStatus, RegistryEntry } from './api-shape.js';
export { catalogServers, openRegistry, serversToServe, type Registry } from './open.js';
export { detectRegistryKind } from './detect.js';
export { serveRegistryApi, type RegistryApiServer } from './api-server.js';
export { checkRegistryUrl } from './guarded-fetch.js';
export { configuredRegistry, isUrl, saveRegistry, type RegistrySource } from './source.js';
