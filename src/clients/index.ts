/** Configuring AI clients to use Moat's workloads: `moat client` and the sync after workload changes. */
export { CLIENTS, CLIENT_IDS, findClient } from './table.js';
export { syncClients, registrations, type ClientSyncResult } from './sync.js';
export { checkClientFile, currentEntries, BACKUP_SUFFIX, type FileReport } from './client-file.js';
export { readLedger } from './ledger.js';
export { isInstalled } from './detect.js';
export { currentClientEnv } from './platform.js';
export type { ClientSpec } from './types.js';
