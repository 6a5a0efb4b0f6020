/**
 * The registry page's data and its run: the search `moat search` does (the same registry API),
 * and a run of an entry by the real `moat run <entry>` (the CLI turns an entry into a RunConfig;
 * the dashboard does not redo that). The dashboard asks for the values the CLI would ask for on
 * a terminal (required inputs without a value), hands plain ones to `moat run` as its flags, and
 * stores secret ones in the secrets manager first (as `moat secret set` does), so a secret is
 * never in a process's arguments, a log or an answer.
 */
import {
  fillPlaceholders,
  openRegistry,
  placeholdersIn,
  planFor,
  shortName,
  type DeclaredInput,
  type RegistryEntry,
  type RunPlan,
} from '../registry/index.js';
import { openSecretsProvider, userSecrets } from '../secrets/index.js';
import { errorMessage, runtimeError, usageError } from '../util/errors.js';
import { nameProblem } from '../workloads/names.js';
import type { RegistryInputField, RegistryRow, RegistryRunRequest } from './shared.js';

/** Runs the real `moat` with these arguments (given by the CLI layer that started the dashboard). */
export type RunMoat = (args: string[]) => Promise<{ code: number; stdout: string; stderr: string }>;

const MAX_ROWS = 100;

function registry(warnings: string[]) {
  return openRegistry({ tolerateUserFailure: true, warn: (line) => warnings.push(line) });
}

export async function searchRegistry(term: string): Promise<{ rows: RegistryRow[]; warnings: string[] }> {
  const warnings: string[] = [];
  const open = await registry(warnings);
  const entries = term.trim() === '' ? await open.list() : await open.search(term.trim());
  return { rows: entries.slice(0, MAX_ROWS).map(rowOf), warnings };
}

function rowOf({ server, status }: RegistryEntry): RegistryRow {
  const row = {
    name: server.name,
    title: server.title ?? '',
    description: server.description,
    version: server.version ?? '',
    status,
  };
  try {
    const plan = planFor(server);
    return { ...row, target: plan.target, transport: plan.transport, inputs: fieldsOf(plan), problem: '' };
  } catch (err) {
    return { ...row, target: '', transport: '', inputs: [], problem: errorMessage(err) };
  }
}

/** What has to be typed: required environment variables, placeholder variables and headers without a value. */
function fieldsOf(plan: RunPlan): RegistryInputField[] {
  const asked = (kind: RegistryInputField['kind'], inputs: readonly DeclaredInput[]) =>
    inputs
      .filter((i) => i.required && i.value === undefined)
      .map((i) => ({
        key: `${kind}:${i.name}`,
        kind,
        name: i.name,
        description: i.description ?? '',
        secret: i.secret,
      }));
  return [...asked('env', plan.env), ...asked('variable', plan.variables), ...asked('header', plan.headers)];
}

/** Runs the entry with the typed values; returns what `moat run` printed. */
export async function runRegistryEntry(body: unknown, runMoat: RunMoat): Promise<string> {
  const request = runRequest(body);
  const warnings: string[] = [];
  const entry = await (await registry(warnings)).find(request.server);
  if (!entry) throw usageError(`field "server": ${request.server} is not in the registry`);
  if (entry.server.name.startsWith('-'))
    throw usageError(`${entry.server.name} is not a name moat run takes`);
  const plan = planFor(entry.server);
  const value = (field: RegistryInputField): string => {
    const typed = request.values[field.key];
    if (typeof typed !== 'string' || typed === '') throw usageError(`${field.name} is required`);
    return typed;
  };
  const fields = fieldsOf(plan);
  const typed = new Map(fields.map((f) => [f.key, value(f)]));
  const { args, secrets } = runArguments(plan, typed);
  args.unshift('run', entry.server.name, ...(request.name ? [`--name=${request.name}`] : []));
  if (secrets.length > 0) {
    // No terminal here: the encrypted provider's password comes from MOAT_SECRETS_PASSWORD or not at all.
    const store = userSecrets(await openSecretsProvider());
    for (const [name, secret] of secrets) await store.set(name, secret);
  }
  const result = await runMoat(args);
  const printed = [...warnings, result.stdout.trim(), result.stderr.trim()].filter(Boolean).join('\n');
  if (result.code !== 0) throw runtimeError(printed || `moat run exited with ${result.code}`);
  return printed;
}

/**
 * The `moat run` flags that give the typed values, and the secrets to store first. A header whose
 * value is a template (`Bearer {token}`, `{team}`) is given whole, filled: the CLI refuses --env
 * for a remote, and a secret variable makes the whole header a stored secret, as the CLI does.
 */
export function runArguments(
  plan: RunPlan,
  typed: ReadonlyMap<string, string>,
): { args: string[]; secrets: Array<[string, string]> } {
  const args: string[] = [];
  const secrets: Array<[string, string]> = [];
  const secretHeader = (header: string, value: string) => {
    const name = `${shortName(plan.server)}-${header.toLowerCase()}`;
    secrets.push([name, value]);
    args.push('--remote-forward-headers-secret', `${header}=${name}`);
  };
  for (const field of fieldsOf(plan)) {
    const value = typed.get(field.key) ?? '';
    if (field.kind === 'header') {
      if (field.secret) secretHeader(field.name, value);
      else args.push('--remote-forward-headers', `${field.name}=${value}`);
    } else if (field.kind === 'env') {
      if (field.secret) {
        secrets.push([field.name, value]);
        args.push('--secret', `${field.name},target=${field.name}`);
      } else args.push('--env', `${field.name}=${value}`);
    }
  }
  const variables = new Map(
    plan.variables.map((v) => [v.name, typed.get(`variable:${v.name}`) ?? v.value ?? '']),
  );
  // Variables in arguments and environment values are given as the CLI takes them: --env NAME=VALUE.
  const inArgsOrEnv = new Set([...plan.args, ...plan.env.map((e) => e.value ?? '')].flatMap(placeholdersIn));
  for (const variable of plan.variables)
    if (inArgsOrEnv.has(variable.name) && typed.has(`variable:${variable.name}`))
      args.push('--env', `${variable.name}=${variables.get(variable.name)}`);
  for (const header of plan.headers) {
    const names = placeholdersIn(header.value ?? '');
    if (names.length === 0) continue;
    const filled = fillPlaceholders(header.value ?? '', variables, `header ${header.name}`);
    if (names.some((n) => plan.variables.find((v) => v.name === n)?.secret))
      secretHeader(header.name, filled);
    else args.push('--remote-forward-headers', `${header.name}=${filled}`);
  }
  return { args, secrets };
}

function runRequest(body: unknown): RegistryRunRequest {
  const { server, name, values } = (body ?? {}) as Partial<Record<keyof RegistryRunRequest, unknown>>;
  if (typeof server !== 'string' || server === '')
    throw usageError('field "server": expected the entry name');
  if (name !== undefined && typeof name !== 'string') throw usageError('field "name": expected a string');
  const problem = name ? nameProblem(name) : undefined;
  if (problem) throw usageError(`field "name": ${problem}`);
  if (typeof values !== 'object' || values === null || Array.isArray(values))
    throw usageError('field "values": expected an object of strings');
  return { server, ...(name ? { name } : {}), values: values as Record<string, string> };
}
