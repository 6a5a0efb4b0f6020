import { describe, expect, it } from 'vitest';
import { parseRunArgv } from './run-command.js';
import { checkFromConfigAlone } from './run-from-config.js';

describe('--from-config stands alone', () => {
  it('names every other configuration flag', () => {
    const parsed = parseRunArgv([
      '--from-config',
      'f.json',
      '--name',
      'x',
      '-e',
      'A=1',
      '--isolate-network=false',
    ]);
    expect(() => checkFromConfigAlone(parsed)).toThrow(
      '--from-config cannot be used with other configuration flags: --env --isolate-network ' +
        '(allowed with it: --foreground, --debug, --name, --proxy-port, --host, --group, --skip-remote-check)',
    );
  });

  it('allows the run-time flags: --foreground, --debug, --name, --proxy-port, --host, --group', () => {
    expect(() =>
      checkFromConfigAlone(
        parseRunArgv([
          '--from-config',
          'f.json',
          '-f',
          '--debug',
          '--name',
          'n',
          '--proxy-port',
          '8123',
          '--host',
          '0.0.0.0',
          '--group',
          'g',
        ]),
      ),
    ).not.toThrow();
  });

  it('rejects a target and server arguments', () => {
    expect(() => checkFromConfigAlone(parseRunArgv(['--from-config', 'f.json', 'img']))).toThrow(
      /--from-config replaces the target; remove "img"/,
    );
    expect(() => checkFromConfigAlone(parseRunArgv(['--from-config', 'f.json', '--', 'a']))).toThrow(
      /cannot take server arguments/,
    );
  });
});
