/**
 * Turns zod validation issues into one readable line per problem, naming the field by its path
 * (`remote_auth_config.timeout`, `toolsOverride.fetch.name`) and what is allowed.
 */
import type * as z from 'zod';

export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out === '' ? '(document)' : out;
}

export function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    const fields = issue.keys.map((k) => fieldPath([...issue.path, k])).join(', ');
    return `unknown field ${fields} (not supported by moat)`;
  }
  return `field ${fieldPath(issue.path)}: ${issue.message}`;
}

/** All issues of a failed parse, joined for an error message. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map(describeIssue).join('; ');
}
