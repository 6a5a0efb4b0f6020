/**
 * The registry side of `moat run <name>` (run-registry.ts says what it does): the lookup of a
 * target in the registry and the plan its entry gives, loaded only when a target may name a
 * registry server.
 */
import { createInterface } from 'node:readline/promises';
import {
  closestNames,
  fillPlaceholders,
  moatSettings,
  openRegistry,
  placeholdersIn,
  planFor,
  shortName,
  splitVersion,
  type DeclaredInput,
  type Registry,
  type RegistryEntry,
  type RegistryServer,
  type RunPlan,
} from '../registry/index.js';
import { isValidImageRef } from '../runtime/image-ref.js';
import type { ImageProvenance } from '../runtime/verify/provenance.js';
import { openSecretsProvider, secretsChildEnv, userSecrets, type SecretsProvider } from '../secrets/index.js';
import { isInteractive, promptHidden } from '../secrets/prompt.js';
import { usageError } from '../util/errors.js';
import type { CliIO } from '../util/io.js';
import { warnUser } from '../util/log.js';
import type { ParsedRun } from './run-command.js';

/** What running a registry entry needs from the command: its output and, to ask for values, stdin. */
export interface RegistryRunContext {
  io: CliIO;
  stdin?: NodeJS.ReadableStream;
}

/**
 * A target that may be a registry name (`name` or `name@version`): what its entry describes, or
 * the target as typed when it is none. A deprecated entry runs with a warning; a deleted one is
 * refused.
 */
export async function runRegistryEntry(
  parsed: ParsedRun,
  typed: string,
  ctx: RegistryRunContext,
): Promise<ParsedRun> {
  const registry = await registryForRun(ctx.io);
  const { name, version } = splitVersion(typed);
  const entry = await registry.find(name, version);
  if (!entry) return notInRegistry(parsed, typed, registry.known(), ctx.io);
  checkStatus(entry, ctx.io);
  return applyPlan(parsed, name, entry.server, ctx);
}

function checkStatus(entry: RegistryEntry, io: CliIO): void {
  const { server, status, statusMessage } = entry;
  const at = `${server.name}${server.version ? `@${server.version}` : ''}`;
  const why = statusMessage ? `: ${statusMessage}` : '';
  if (status === 'deleted') throw usageError(`${at} is deleted in the registry${why}; it is not run`);
  if (status === 'deprecated') warnUser(`${at} is deprecated in the registry${why}`, io.stderr);
}

/** The provenance the registry entry `name` gives its image, when it is an OCI entry. */
export async function savedEntryProvenance(
  name: string,
  ctx: RegistryRunContext,
): Promise<ImageProvenance | undefined> {
  const server = (await (await registryForRun(ctx.io)).find(name))?.server;
  if (!server || !server.packages?.some((p) => p.registryType === 'oci')) return undefined;
  // The saved file, not the entry, says what runs: only the entry's provenance is read here.
  return moatSettings(server).provenance;
}

/** The registry; one the user's registry cannot join is a warning, not a failure. */
function registryForRun(io: CliIO): Promise<Registry> {
  return openRegistry({ tolerateUserFailure: true, warn: (line) => warnUser(line, io.stderr) });
}

/** Not a registry name: an image reference runs as before; anything else gets the closest names. */
function notInRegistry(
  parsed: ParsedRun,
  typed: string,
  servers: readonly RegistryServer[],
  io: CliIO,
): ParsedRun {
  const close = closestNames(servers, typed);
  const hint = close.length > 0 ? `did you mean ${close.join(', ')}?` : 'see moat registry list';
  if (!isValidImageRef(typed)) {
    throw usageError(
      `${JSON.stringify(typed)} is not a registry server, image reference, protocol scheme or http(s) URL; ${hint}`,
    );
  }
  // A plain word one typo away from a server name is probably that server, not an image.
  const typo = closestNames(servers, typed, 1);
  if (typo.length > 0 && !/[/:@]/.test(typed)) {
    warnUser(
      `${typed} is not in the registry; running it as an image (did you mean ${typo.join(', ')}?)`,
      io.stderr,
    );
  }
  return parsed;
}

async function applyPlan(
  parsed: ParsedRun,
  typed: string,
  server: RegistryServer,
  ctx: RegistryRunContext,
): Promise<ParsedRun> {
  const plan = planFor(server);
  const { flags, explicit } = parsed;
  const userArgs = parsed.serverArgs.length > 0;
  if (!userArgs && plan.missingArgs.length > 0) {
    throw usageError(
      `${server.name} needs ${plan.missingArgs.join(', ')}: give the server's arguments after --, e.g. moat run ${typed} -- …`,
    );
  }
  const inputs = new Inputs(server, ctx);
  const givenHeaders = keysOf(
    [...flags.remoteForwardHeaders, ...flags.remoteForwardHeadersSecret],
    /^([^=]*)=/,
  );
  const { plan: filled, composers } = await filledPlan(plan, userArgs, inputs, flags.env, givenHeaders);
  const envFromFile = flags.envFile !== undefined || flags.envFileDir !== undefined;
  const env = await inputs.environment(filled, flags.env, flags.secret, envFromFile);
  const headers = await inputs.headers(
    filled,
    flags.remoteForwardHeaders,
    flags.remoteForwardHeadersSecret,
    composers,
  );
  await inputs.finish();
  const http = (flags.transport ?? plan.transport) !== 'stdio';
  return {
    ...parsed,
    target: plan.target,
    serverArgs: userArgs ? parsed.serverArgs : filled.args,
    registry: {
      server: server.name,
      ...(plan.permissions !== undefined ? { permissions: plan.permissions } : {}),
      ...(plan.provenance !== undefined ? { provenance: plan.provenance } : {}),
    },
    flags: {
      ...flags,
      name: flags.name ?? typed.replace(/[./]/g, '-'),
      transport: flags.transport ?? plan.transport,
      ...(http && plan.targetPort !== undefined && !explicit.has('target-port')
        ? { targetPort: plan.targetPort }
        : {}),
      env: [...flags.env, ...env.plain],
      secret: [...flags.secret, ...env.secretRefs],
      remoteForwardHeaders: [...flags.remoteForwardHeaders, ...headers.plain],
      remoteForwardHeadersSecret: [...flags.remoteForwardHeadersSecret, ...headers.secretRefs],
    },
  };
}

/** A header whose value holds a secret variable: the whole value is kept as a secret. */
type SecretHeaderValues = Map<string, (typed: string) => string>;

/**
 * The plan with the `{name}` placeholders of its arguments (unless the user gave their own),
 * environment values and header values filled from the entry's variables. A header with a
 * secret variable (`Bearer {token}`) becomes a required secret header; `composers` fills its
 * value once the secret is typed.
 */
async function filledPlan(
  plan: RunPlan,
  userArgs: boolean,
  inputs: Inputs,
  given: readonly string[],
  givenHeaders: ReadonlySet<string>,
): Promise<{ plan: RunPlan; composers: SecretHeaderValues }> {
  const args = userArgs ? [] : plan.args;
  // A header the user gave whole needs none of its variables.
  const toFill = (header: DeclaredInput) => !givenHeaders.has(header.name.toLowerCase());
  const secretVariable = (header: DeclaredInput): DeclaredInput | undefined =>
    plan.variables.find((v) => v.secret && placeholdersIn(header.value ?? '').includes(v.name));
  // A secret variable is asked for with its header (below); in an argument or env value it is refused.
  const inArgsOrEnv = new Set([...args, ...plan.env.map((i) => i.value ?? '')].flatMap(placeholdersIn));
  const headerOf = new Map(
    plan.headers
      .filter(toFill)
      .flatMap((h) => placeholdersIn(h.value ?? '').map((v) => [v, h.name] as const)),
  );
  const values = await inputs.variables(
    plan.variables.filter((v) => inArgsOrEnv.has(v.name) || (headerOf.has(v.name) && !v.secret)),
    given,
    // A variable only a header uses is given with that header (a remote workload takes no --env).
    (name) =>
      inArgsOrEnv.has(name)
        ? `--env ${name}=…`
        : `--remote-forward-headers ${headerOf.get(name) ?? ''}=… (the whole value)`,
  );
  const where = `registry server ${plan.server}`;
  const fillOne = (i: DeclaredInput, what: string): DeclaredInput =>
    i.value === undefined
      ? i
      : { ...i, value: fillPlaceholders(i.value, values, `${where}, ${what} ${i.name}`) };
  const composers: SecretHeaderValues = new Map();
  const headers = plan.headers.map((header) => {
    if (!toFill(header)) return header;
    const variable = secretVariable(header);
    if (!variable || header.value === undefined) return fillOne(header, 'header');
    const template = header.value;
    composers.set(header.name, (typed) =>
      fillPlaceholders(
        template,
        new Map([...values, [variable.name, typed]]),
        `${where}, header ${header.name}`,
      ),
    );
    return {
      name: header.name,
      description: `the value of {${variable.name}} in ${JSON.stringify(template)}${variable.description ? `: ${variable.description}` : ''}`,
      required: true,
      secret: true,
    };
  });
  return {
    plan: {
      ...plan,
      args: args.map((a) => fillPlaceholders(a, values, `${where}, argument ${a}`)),
      env: plan.env.map((e) => fillOne(e, 'environment variable')),
      headers,
    },
    composers,
  };
}

function keysOf(values: readonly string[], separator: RegExp): Set<string> {
  return new Set(values.map((v) => (separator.exec(v)?.[1] ?? v).toLowerCase()));
}

/** Fills the entry's declared variables and headers: the user's values, defaults, stored secrets, prompts. */
class Inputs {
  private provider?: SecretsProvider;
  private readonly stdin: NodeJS.ReadableStream;

  constructor(
    private readonly server: RegistryServer,
    private readonly ctx: RegistryRunContext,
  ) {
    this.stdin = ctx.stdin ?? process.stdin;
  }

  async environment(
    plan: RunPlan,
    given: readonly string[],
    secretFlags: readonly string[],
    envFromFile: boolean,
  ): Promise<{ plain: string[]; secretRefs: string[] }> {
    const set = new Set([...keysOf(given, /^([^=]*)=/), ...keysOf(secretFlags, /,target=(.+)$/)]);
    const plain: string[] = [];
    const secretRefs: string[] = [];
    for (const variable of plan.env) {
      if (set.has(variable.name.toLowerCase())) continue;
      if (variable.value !== undefined && !variable.secret) plain.push(`${variable.name}=${variable.value}`);
      // An env file may hold it; the server reports it if not.
      else if (!variable.required || envFromFile) continue;
      else if (variable.secret) {
        const name = await this.secret(variable, variable.name, {
          flag: `--secret NAME,target=${variable.name}`,
          what: 'environment variable',
        });
        secretRefs.push(`${name},target=${variable.name}`);
      } else {
        const value = await this.ask(variable, `--env ${variable.name}=…`, 'environment variable');
        plain.push(`${variable.name}=${value}`);
      }
    }
    return { plain, secretRefs };
  }

  /**
   * Values of placeholder variables: given as `--env NAME=…`, the entry's value or default,
   * asked for on a terminal when required, else empty. A secret one here (in an argument or an
   * environment value) is refused: its value would end up in the saved command line or settings.
   */
  async variables(
    variables: readonly DeclaredInput[],
    given: readonly string[],
    flagFor: (name: string) => string,
  ): Promise<Map<string, string>> {
    const givenValues = new Map(given.map((v) => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)]));
    const values = new Map<string, string>();
    for (const variable of variables) {
      if (variable.secret)
        throw usageError(
          `${this.server.name} declares the placeholder variable ${variable.name} as secret; moat does not put ` +
            'secret values into arguments or saved settings (declare the environment variable itself as isSecret)',
        );
      const value =
        givenValues.get(variable.name) ??
        variable.value ??
        (variable.required ? await this.ask(variable, flagFor(variable.name), 'placeholder variable') : '');
      values.set(variable.name, value);
    }
    return values;
  }

  async headers(
    plan: RunPlan,
    given: readonly string[],
    secretFlags: readonly string[],
    composers: SecretHeaderValues,
  ): Promise<{ plain: string[]; secretRefs: string[] }> {
    const set = new Set([...keysOf(given, /^([^=]*)=/), ...keysOf(secretFlags, /^([^=]*)=/)]);
    const plain: string[] = [];
    const secretRefs: string[] = [];
    for (const header of plan.headers) {
      if (set.has(header.name.toLowerCase())) continue;
      if (header.value !== undefined && !header.secret) plain.push(`${header.name}=${header.value}`);
      else if (!header.required) continue;
      else if (header.secret) {
        const secretName = `${shortName(this.server.name)}-${header.name.toLowerCase()}`;
        const name = await this.secret(
          header,
          secretName,
          { flag: `--remote-forward-headers-secret ${header.name}=${secretName}`, what: 'header' },
          composers.get(header.name),
        );
        secretRefs.push(`${header.name}=${name}`);
      } else {
        plain.push(
          `${header.name}=${await this.ask(header, `--remote-forward-headers ${header.name}=…`, 'header')}`,
        );
      }
    }
    return { plain, secretRefs };
  }

  /**
   * The user secret holding a required secret input: already stored, or asked for (hidden) and
   * stored now (as `compose` makes it from what was typed). Without a terminal a secret that is
   * not stored is an error naming the flag.
   */
  private async secret(
    input: DeclaredInput,
    secretName: string,
    how: { flag: string; what: string },
    compose: (typed: string) => string = (typed) => typed,
  ): Promise<string> {
    const interactive = isInteractive(this.stdin);
    const stored = await this.storedSecret(secretName, interactive);
    if (stored) return secretName;
    if (!interactive) {
      throw usageError(
        `${this.server.name} needs the secret ${how.what} ${input.name}: give it with ${how.flag}, ` +
          `or store it once with moat secret set ${secretName}`,
      );
    }
    const value = await promptHidden(`${this.question(input)} (hidden): `, this.stdin, this.ctx.io.stderr);
    if (value === '') throw usageError(`no value given for ${input.name}`);
    await userSecrets(await this.secrets()).set(secretName, compose(value));
    this.ctx.io.stderr.write(`Stored ${input.name} in the secrets manager as ${secretName}\n`);
    return secretName;
  }

  /** Whether the secret is stored; without a terminal an unusable provider counts as "not stored". */
  private async storedSecret(name: string, interactive: boolean): Promise<boolean> {
    try {
      return (await userSecrets(await this.secrets()).get(name)) !== undefined;
    } catch (err) {
      if (interactive) throw err;
      return false;
    }
  }

  private async ask(input: DeclaredInput, flag: string, what: string): Promise<string> {
    if (!isInteractive(this.stdin)) {
      throw usageError(`${this.server.name} needs the ${what} ${input.name}: give it with ${flag}`);
    }
    const rl = createInterface({ input: this.stdin, output: this.ctx.io.stderr, terminal: true });
    try {
      const value = (await rl.question(`${this.question(input)}: `)).trim();
      if (value === '') throw usageError(`no value given for ${input.name}`);
      return value;
    } finally {
      rl.close();
    }
  }

  private question(input: DeclaredInput): string {
    return `${this.server.name} needs ${input.name}${input.description ? ` (${input.description})` : ''}`;
  }

  private async secrets(): Promise<SecretsProvider> {
    this.provider ??= await openSecretsProvider({ input: this.stdin, output: this.ctx.io.stderr });
    return this.provider;
  }

  /**
   * The workload layer opens the secrets provider again; passing on the password typed here
   * (as a detached supervisor gets it) spares the user a second prompt.
   */
  async finish(): Promise<void> {
    if (this.provider) Object.assign(process.env, await secretsChildEnv(this.provider));
  }
}
