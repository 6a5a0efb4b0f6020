import { describe, expect, it } from 'vitest';
import { exportedRunConfig, runConfigSchema } from './runconfig.js';

describe('exportedRunConfig', () => {
  const base = runConfigSchema.parse({
    name: 'w',
    image: 'img',
    transport: 'streamable-http',
    host: '127.0.0.1',
    port: 41234,
    target_port: 40001,
  });

  it('gives back the ports moat picked, so the export runs again anywhere', () => {
    const exported = exportedRunConfig({ ...base, auto_ports: ['port', 'target_port'] });
    expect(exported.port).toBe(0);
    expect(exported).not.toHaveProperty('target_port');
    expect(exported).not.toHaveProperty('auto_ports');
  });

  it('keeps ports the user chose', () => {
    expect(exportedRunConfig(base)).toEqual(base);
    expect(exportedRunConfig({ ...base, auto_ports: ['target_port'] }).port).toBe(41234);
  });
});
