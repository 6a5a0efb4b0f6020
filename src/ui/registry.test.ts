import { describe, expect, it } from 'vitest';
import type { RunPlan } from '../registry/index.js';
import { runArguments } from './registry.js';

const remote: RunPlan = {
  server: 'io.example/svc',
  kind: 'remote',
  target: 'https://svc.example/mcp',
  transport: 'streamable-http',
  args: [],
  missingArgs: [],
  env: [],
  headers: [
    { name: 'Authorization', value: 'Bearer {token}', required: false, secret: false },
    { name: 'X-Team', required: true, secret: false },
    { name: 'X-Key', required: true, secret: true },
    { name: 'X-Region', value: '{region}', required: false, secret: false },
  ],
  variables: [
    { name: 'token', required: true, secret: true },
    { name: 'region', required: true, secret: false },
  ],
};

describe('the flags a registry run from the dashboard gives moat run', () => {
  it('gives headers whole (filled), and keeps every secret out of the arguments', () => {
    const typed = new Map([
      ['variable:token', 't0ken'],
      ['variable:region', 'eu'],
      ['header:X-Team', 'ops'],
      ['header:X-Key', 'k3y'],
    ]);
    const { args, secrets } = runArguments(remote, typed);
    expect(args).toEqual([
      '--remote-forward-headers',
      'X-Team=ops',
      '--remote-forward-headers-secret',
      'X-Key=svc-x-key',
      '--remote-forward-headers-secret',
      'Authorization=svc-authorization',
      '--remote-forward-headers',
      'X-Region=eu',
    ]);
    expect(secrets).toEqual([
      ['svc-x-key', 'k3y'],
      ['svc-authorization', 'Bearer t0ken'],
    ]);
    expect(args.join(' ')).not.toMatch(/t0ken|k3y/);
  });

  it('gives environment values and argument variables as --env, secret ones as stored secrets', () => {
    const plan: RunPlan = {
      ...remote,
      kind: 'image',
      target: 'example/svc:1',
      args: ['--dir', '{dir}'],
      env: [
        { name: 'API_KEY', required: true, secret: true },
        { name: 'MODE', required: true, secret: false },
      ],
      headers: [],
      variables: [{ name: 'dir', required: true, secret: false }],
    };
    const typed = new Map([
      ['env:API_KEY', 's3cret'],
      ['env:MODE', 'fast'],
      ['variable:dir', '/data'],
    ]);
    expect(runArguments(plan, typed)).toEqual({
      args: ['--secret', 'API_KEY,target=API_KEY', '--env', 'MODE=fast', '--env', 'dir=/data'],
      secrets: [['API_KEY', 's3cret']],
    });
  });
});
