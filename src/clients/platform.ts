/** Where clients keep their files: the per-platform directories the client table builds on. */
import { join } from 'node:path';
import type { ClientEnv } from './types.js';

export function currentClientEnv(env: NodeJS.ProcessEnv = process.env): ClientEnv {
  return { home: env.HOME ?? env.USERPROFILE ?? '', platform: process.platform, env };
}

/**
 * The per-user application settings directory Electron apps (VS Code, Claude Desktop) use:
 * `$XDG_CONFIG_HOME` or `~/.config` on Linux, `~/Library/Application Support` on macOS,
 * `%APPDATA%` on Windows.
 */
export function appConfigDir({ home, platform, env }: ClientEnv): string {
  if (platform === 'darwin') return join(home, 'Library', 'Application Support');
  if (platform === 'win32') return env.APPDATA || join(home, 'AppData', 'Roaming');
  return env.XDG_CONFIG_HOME || join(home, '.config');
}

/** `$XDG_CONFIG_HOME` or `~/.config` on every platform (CLIs that follow XDG on macOS too). */
export function xdgConfigDir({ home, env }: ClientEnv): string {
  return env.XDG_CONFIG_HOME || join(home, '.config');
}
