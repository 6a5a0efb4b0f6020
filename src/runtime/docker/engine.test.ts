/** What the engine adapter reads from an inspect without an engine: the command an exec runs again. */
import { describe, expect, it } from 'vitest';
import { containerCommand } from './engine.js';

describe('containerCommand', () => {
  it('is the Entrypoint, then the Cmd, as the engine resolved them', () => {
    expect(
      containerCommand({
        Config: { Entrypoint: ['/usr/local/bin/node'], Cmd: ['/app/server.mjs', 'stdio'] },
      }),
    ).toEqual(['/usr/local/bin/node', '/app/server.mjs', 'stdio']);
  });

  it('takes a string form and missing parts', () => {
    expect(containerCommand({ Config: { Entrypoint: null, Cmd: ['server', '--stdio'] } })).toEqual([
      'server',
      '--stdio',
    ]);
    expect(containerCommand({ Config: { Entrypoint: '/entry.sh', Cmd: null } })).toEqual(['/entry.sh']);
    expect(containerCommand({})).toEqual([]);
  });
});
