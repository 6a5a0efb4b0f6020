import { describe, expect, it } from 'vitest';
import {
  applyStatusChange,
  HISTORY_LIMIT,
  parseStatusRecord,
  reconcileStatus,
  type StatusRecord,
} from './status.js';

const at = new Date('2026-01-01T00:00:00Z');
const record = (status: StatusRecord['status'], pid = 42): StatusRecord =>
  applyStatusChange(undefined, { status, context: 'recorded', process_id: pid }, at);

describe('applyStatusChange', () => {
  it('caps the history', () => {
    let r: StatusRecord | undefined;
    for (let i = 0; i < HISTORY_LIMIT + 5; i++)
      r = applyStatusChange(r, { status: 'restarting', context: `#${i}` }, at);
    expect(r?.history).toHaveLength(HISTORY_LIMIT);
    expect(r?.history.at(-1)?.context).toBe(`#${HISTORY_LIMIT + 4}`);
  });
  it('keeps the status when only fields change', () => {
    const r = applyStatusChange(record('running'), { container_id: 'abc' }, at);
    expect(r).toMatchObject({ status: 'running', status_context: 'recorded', container_id: 'abc' });
    expect(r.history).toHaveLength(1);
  });
});

describe('reconcileStatus', () => {
  const alive = { supervisorAlive: true, remote: false, container: { running: true, state: 'running' } };

  it('trusts a running record when the supervisor and container run', () => {
    expect(reconcileStatus('w', record('running'), alive)).toEqual({
      status: 'running',
      context: 'recorded',
    });
  });

  it('never says running when the supervisor is dead', () => {
    const seen = reconcileStatus('w', record('running'), { ...alive, supervisorAlive: false });
    expect(seen.status).toBe('unhealthy');
    expect(seen.context).toMatch(/supervisor process \(pid 42\) is not running.*moat start w/);
  });

  it('reports stopped when the supervisor died while starting and no container runs', () => {
    const seen = reconcileStatus('w', record('starting'), {
      supervisorAlive: false,
      remote: false,
      container: undefined,
    });
    expect(seen.status).toBe('stopped');
  });

  it('flags a running record whose container is gone or exited', () => {
    expect(reconcileStatus('w', record('running'), { ...alive, container: undefined }).status).toBe(
      'unhealthy',
    );
    const exited = reconcileStatus('w', record('running'), {
      ...alive,
      container: { running: false, state: 'exited' },
    });
    expect(exited).toEqual({ status: 'unhealthy', context: 'the container is exited' });
  });

  it('trusts remote workloads and unchecked containers while the supervisor lives', () => {
    expect(
      reconcileStatus('w', record('running'), { supervisorAlive: true, remote: true, container: null })
        .status,
    ).toBe('running');
  });

  it('keeps final states as recorded', () => {
    for (const status of ['stopped', 'error'] as const) {
      expect(reconcileStatus('w', record(status, 0), { ...alive, supervisorAlive: false }).status).toBe(
        status,
      );
    }
  });
});

describe('parseStatusRecord', () => {
  const minimal = { status: 'running', created_at: 't0', updated_at: 't1' };

  it('fills the defaults, keeps the optional fields and drops unknown ones', () => {
    expect(parseStatusRecord(minimal)).toEqual({
      ...minimal,
      status_context: '',
      process_id: 0,
      restarts: 0,
      history: [],
    });
    const full = {
      ...minimal,
      status_context: 'ok',
      process_id: 42,
      process_start: 7,
      container_id: 'c',
      url: 'http://127.0.0.1:1/mcp',
      port: 1,
      restarts: 2,
      history: [{ status: 'starting', context: '', at: 't0' }],
    };
    expect(parseStatusRecord({ ...full, extra: true })).toEqual(full);
  });

  it.each([
    [[], /expected a JSON object/],
    [{ ...minimal, status: 'sleeping' }, /field status: expected one of starting, running/],
    [{ ...minimal, created_at: 3 }, /field created_at: expected a string/],
    [{ ...minimal, process_id: -1 }, /field process_id: expected a non-negative integer/],
    [{ ...minimal, port: 1.5 }, /field port: expected an integer/],
    [{ ...minimal, history: {} }, /field history: expected an array/],
    [
      { ...minimal, history: [{ status: 'running', context: '' }] },
      /history\[0\]: field at: expected a string/,
    ],
  ])('names the bad field of %j', (raw, message) => {
    expect(() => parseStatusRecord(raw)).toThrow(message);
  });
});
