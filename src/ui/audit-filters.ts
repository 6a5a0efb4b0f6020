/** The audit page's filters from its query string (`user`, `tool`, `decision`, `workload`). */
import type { AuditFilters } from './shared.js';

export function auditFilters(url: URL): AuditFilters {
  const filters: AuditFilters = {};
  for (const key of ['user', 'tool', 'decision', 'workload'] as const) {
    const value = url.searchParams.get(key);
    if (value) filters[key] = value;
  }
  return filters;
}
