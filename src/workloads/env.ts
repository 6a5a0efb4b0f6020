/**
 * The container's environment, resolved each time the workload starts (never stored as values
 * beyond what the user put in the RunConfig): env files first, then `env_vars` (-e), then
 * `--secret` values from the secrets manager (opened with the environment `moat run` handed
 * the supervisor). Env files are read at start so an edited file takes effect on restart.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunConfig } from '../config/runconfig.js';
import { workloadSecretEnv } from '../secrets/workload.js';
import { errorMessage, usageError } from '../util/errors.js';

const LINE = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*?)\s*$/;

/** Parses dotenv text: `KEY=VALUE`, `# comments`, an optional `export ` prefix, quoted values. */
export function parseDotenv(text: string, source: string): Record<string, string> {
  const env: Record<string, string> = {};
  text.split(/\r?\n/).forEach((line, index) => {
    if (/^\s*(#|$)/.test(line)) return;
    const match = LINE.exec(line);
    if (!match) throw usageError(`${source}:${index + 1}: expected KEY=VALUE, got ${JSON.stringify(line)}`);
    let value = match[2] as string;
    const quote = value[0];
    if ((quote === '"' || quote === "'") && value.length >= 2 && value.endsWith(quote)) {
      value = value.slice(1, -1);
      if (quote === '"') value = value.replace(/\\n/g, '\n').replace(/\\"/g, '"');
    }
    env[match[1] as string] = value;
  });
  return env;
}

async function readEnvFile(path: string): Promise<Record<string, string>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw usageError(`cannot read env file ${path}: ${errorMessage(err)}`);
  }
  return parseDotenv(text, path);
}

/** Every non-hidden regular file in `dir`, in name order, merged. */
async function readEnvDir(dir: string): Promise<Record<string, string>> {
  let files: string[];
  try {
    files = (await readdir(dir)).filter((f) => !f.startsWith('.')).sort();
  } catch (err) {
    throw usageError(`cannot read env file directory ${dir}: ${errorMessage(err)}`);
  }
  const env: Record<string, string> = {};
  for (const file of files) {
    const path = join(dir, file);
    if ((await stat(path)).isFile()) Object.assign(env, await readEnvFile(path));
  }
  return env;
}

/**
 * The environment the server gets, in precedence order:
 * env file directory < env file < env_vars (-e) < secrets.
 */
export async function containerEnvironment(config: RunConfig): Promise<Record<string, string>> {
  const fromDir = config.env_file_dir ? await readEnvDir(config.env_file_dir) : {};
  const fromFile = config.env_file ? await readEnvFile(config.env_file) : {};
  return {
    ...fromDir,
    ...fromFile,
    ...(config.env_vars ?? {}),
    ...(await workloadSecretEnv(config)),
  };
}
