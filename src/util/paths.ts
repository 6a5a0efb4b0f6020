/**
 * XDG base directories (Linux defaults; MOAT_HOME overrides them all for tests and
 * isolated installs). Layout:
 *   config  $XDG_CONFIG_HOME/moat/            config.yaml, ignore file
 *   state   $XDG_STATE_HOME/moat/runconfigs/  one RunConfig per workload
 *           $XDG_STATE_HOME/moat/groups/      one file per group
 *   data    $XDG_DATA_HOME/moat/statuses/     workload status + lock files
 *           $XDG_DATA_HOME/moat/logs/         supervisor logs
 *           $XDG_DATA_HOME/moat/secrets_encrypted
 *   cache   $XDG_CACHE_HOME/moat/             Node's compile cache (safe to delete)
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface MoatDirs {
  config: string;
  state: string;
  data: string;
  cache: string;
  runconfigs: string;
  groups: string;
  statuses: string;
  logs: string;
}

export function moatDirs(env: NodeJS.ProcessEnv = process.env): MoatDirs {
  const home = env.HOME ?? homedir();
  const override = env.MOAT_HOME;
  const config = override
    ? join(override, 'config')
    : join(env.XDG_CONFIG_HOME || join(home, '.config'), 'moat');
  const state = override
    ? join(override, 'state')
    : join(env.XDG_STATE_HOME || join(home, '.local/state'), 'moat');
  const data = override
    ? join(override, 'data')
    : join(env.XDG_DATA_HOME || join(home, '.local/share'), 'moat');
  const cache = override ? join(override, 'cache') : join(env.XDG_CACHE_HOME || join(home, '.cache'), 'moat');
  return {
    config,
    state,
    data,
    cache,
    runconfigs: join(state, 'runconfigs'),
    groups: join(state, 'groups'),
    statuses: join(data, 'statuses'),
    logs: join(data, 'logs'),
  };
}
