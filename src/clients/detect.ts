/** Whether a client looks installed: its config directory exists, or its command is on PATH. */
import { access, stat } from 'node:fs/promises';
import { constants } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import type { ClientEnv, ClientSpec } from './types.js';

async function onPath(command: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const found = await access(join(dir, command), constants.X_OK).then(
      () => true,
      () => false,
    );
    if (found) return true;
  }
  return false;
}

export async function isInstalled(client: ClientSpec, env: ClientEnv): Promise<boolean> {
  const file = client.file(env);
  // A file right in the home directory (~/.claude.json): the home says nothing, the file does.
  const marker = dirname(file) === env.home ? file : dirname(file);
  if (
    await stat(marker).then(
      () => true,
      () => false,
    )
  )
    return true;
  return client.command !== undefined && onPath(client.command, env.env);
}
