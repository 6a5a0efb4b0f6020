/**
 * A group of three workloads of different kinds for `moat group serve` end-to-end tests, run with
 * the real `moat` binary: a stdio server in a Podman container, a streamable-HTTP server in a
 * container, and a server on the host run as a remote URL. The two containers run the same test
 * server (`echo`, `get_env`, `whoami`...) with MEMBER set to their workload name, so `get_env
 * MEMBER` tells which one answered; whatever the remote serves, every member has `echo`.
 */
import { moatOk } from './moat-cli.js';
import { uniqueName } from './podman.js';

export interface GroupOfThree {
  group: string;
  /** The stdio container's workload (and container) name. */
  stdio: string;
  /** The HTTP container's workload (and container) name. */
  http: string;
  /** The remote-URL workload's name. */
  far: string;
}

/** Names for a group and its three members, unique to this call (container names are global to Podman). */
export function groupOfThreeNames(prefix: string): GroupOfThree {
  const [group, stdio, http, far] = [prefix, 'stdio', 'http', 'far'].map(uniqueName) as [
    string,
    string,
    string,
    string,
  ];
  return { group, stdio, http, far };
}

/** Creates the group and runs its three members (in parallel); `remoteUrl` is the remote member's server. */
export async function runGroupOfThree(
  home: string,
  names: GroupOfThree,
  images: { stdio: string; http: string },
  remoteUrl: string,
): Promise<GroupOfThree> {
  const { group, stdio, http, far } = names;
  await moatOk(home, ['group', 'create', group]);
  const member = (name: string) => ['--name', name, '--group', group, '--env', `MEMBER=${name}`];
  await Promise.all([
    moatOk(home, ['run', '--transport', 'stdio', ...member(stdio), images.stdio]),
    moatOk(home, ['run', ...member(http), images.http]),
    moatOk(home, ['run', remoteUrl, '--name', far, '--group', group]),
  ]);
  return names;
}
