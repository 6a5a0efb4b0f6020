/**
 * Ignore files (`.thvignore` in a mounted directory: ToolHive's way to hide files from a server)
 * are not implemented yet in moat. Mounting such a directory would expose exactly the files its
 * owner meant to hide, so the mount is refused instead of the file being ignored.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { usageError } from '../util/errors.js';
import type { MountRequest } from './permissions.js';

export const IGNORE_FILE = '.thvignore';

export function refuseUnhonoredIgnoreFiles(mounts: readonly MountRequest[]): void {
  for (const mount of mounts) {
    const ignoreFile = join(mount.source, IGNORE_FILE);
    if (existsSync(ignoreFile)) {
      throw usageError(
        `cannot mount ${mount.source} at ${mount.target}: it contains ${ignoreFile}, and ignore files are ` +
          `not implemented yet in moat, so the files it lists would be visible in the container; ` +
          `remove ${IGNORE_FILE} or mount a directory without the files to hide`,
      );
    }
  }
}
