import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { CONFIG_MAPS } from './resource.js';
import { runController, type ControllerOptions } from './run.js';

const base: ControllerOptions = {
  name: 'demo',
  kubeConfig: new KubeConfig(),
  primary: CONFIG_MAPS,
  leaderElection: false,
  probes: false,
  log: pino({ level: 'silent' }),
  reconcile: () => Promise.resolve(),
};

describe('runController options', () => {
  it.each([
    [{ namespaces: [] }, 'namespaces: list at least one namespace, or leave it unset to watch all'],
    [{ namespaces: ['ok', 'Not_OK'] }, 'namespaces: "Not_OK" is not a namespace name'],
    [{ name: 'Demo Controller' }, 'name: "Demo Controller" must be lower-case letters'],
    [{ workers: 0 }, 'workers must be a whole number of at least 1, got 0'],
  ])('rejects %o with a message naming the field', async (bad, message) => {
    await expect(runController({ ...base, ...bad })).rejects.toThrow(message);
  });
});
