/**
 * A permission profile file (`--permission-profile <path>`), validated strictly: an unknown key
 * or a wrong type names the field and the file. What a profile means is runtime/permissions.ts.
 */
import { usageError } from '../util/errors.js';
import { describeIssues } from './issues.js';
import { permissionProfileSchema, type PermissionProfile } from './runconfig.js';

/** Validates parsed JSON as a profile; `source` names the file in messages. */
export function parsePermissionProfile(value: unknown, source: string): PermissionProfile {
  const result = permissionProfileSchema.safeParse(value);
  if (!result.success)
    throw usageError(
      `invalid permission profile ${source}: ${describeIssues(result.error)}. ` +
        'Allowed fields: name, read, write, network {mode, outbound {insecure_allow_all, allow_host, allow_port}, ' +
        'inbound {allow_host}}, privileged',
    );
  return result.data;
}
