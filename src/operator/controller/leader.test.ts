import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { microTime } from './events.js';
import { LeaderElector, defaultIdentity } from './leader.js';

const base = {
  kubeConfig: new KubeConfig(),
  namespace: 'ns',
  name: 'lease',
  log: pino({ level: 'silent' }),
  onStartedLeading: () => {},
  onStoppedLeading: () => {},
};

describe('leader election options', () => {
  it('identity is the pod name when given, else host and pid', () => {
    expect(defaultIdentity({ POD_NAME: 'moat-operator-abc' })).toBe('moat-operator-abc');
    expect(defaultIdentity({})).toMatch(new RegExp(`_${process.pid}$`));
  });

  it('refuses a lease duration the Lease cannot store', () => {
    expect(() => new LeaderElector({ ...base, leaseDurationMs: 1500 })).toThrow(
      'leaseDurationMs must be whole seconds of at least 1000, got 1500',
    );
  });

  it('refuses timings where the renew deadline is not inside the lease', () => {
    expect(
      () => new LeaderElector({ ...base, leaseDurationMs: 2000, renewDeadlineMs: 2000, retryPeriodMs: 100 }),
    ).toThrow('leaseDurationMs > renewDeadlineMs > retryPeriodMs > 0');
    expect(
      () => new LeaderElector({ ...base, leaseDurationMs: 2000, renewDeadlineMs: 500, retryPeriodMs: 500 }),
    ).toThrow('leaseDurationMs > renewDeadlineMs > retryPeriodMs > 0');
  });

  it('writes MicroTime with six fractional digits', () => {
    expect(microTime(new Date('2026-11-24T10:00:00.123Z'))).toBe('2026-11-24T10:00:00.123000Z');
  });
});
