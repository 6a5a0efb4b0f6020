import { describe, expect, it } from 'vitest';
import type { BackendInputRequest } from '../down/seam.js';
import { embeddedRequest, inputKey, missingCapability } from './inputs.js';

const elicit = (params: Record<string, unknown> = {}): BackendInputRequest => ({
  id: 1,
  method: 'elicitation/create',
  params: { message: 'm', ...params },
});
const sampling: BackendInputRequest = { id: 2, method: 'sampling/createMessage', params: {} };
const roots: BackendInputRequest = { id: 3, method: 'roots/list', params: {} };

describe('which input kinds a request declared', () => {
  it('reads elicitation modes: {} is form only; named modes are what they name', () => {
    expect(missingCapability(elicit(), { elicitation: {} })).toBeUndefined();
    expect(missingCapability(elicit({ mode: 'url' }), { elicitation: {} })).toEqual({
      elicitation: { url: {} },
    });
    expect(missingCapability(elicit({ mode: 'url' }), { elicitation: { url: {} } })).toBeUndefined();
    expect(missingCapability(elicit(), { elicitation: { url: {} } })).toEqual({ elicitation: { form: {} } });
    expect(missingCapability(elicit(), {})).toEqual({ elicitation: { form: {} } });
  });

  it('needs sampling and roots declared as objects', () => {
    expect(missingCapability(sampling, { sampling: {} })).toBeUndefined();
    expect(missingCapability(sampling, { sampling: true, roots: {} })).toEqual({ sampling: {} });
    expect(missingCapability(roots, { roots: { listChanged: true } })).toBeUndefined();
    expect(missingCapability(roots, { elicitation: {} })).toEqual({ roots: {} });
  });
});

describe('input keys', () => {
  it("uses the server's hint when it is well formed and free, else kind and counter", () => {
    const hinted = elicit({ _meta: { 'moat.dev/inputKey': 'user_name', other: 1 } });
    expect(inputKey(hinted, 1, () => false)).toBe('user_name');
    expect(inputKey(hinted, 2, (key) => key === 'user_name')).toBe('elicitation-2');
    expect(inputKey(elicit({ _meta: { 'moat.dev/inputKey': 'no spaces!' } }), 3, () => false)).toBe(
      'elicitation-3',
    );
    expect(inputKey(sampling, 4, () => false)).toBe('sampling-4');
    // The hint never reaches the client; the server's other _meta does.
    expect(embeddedRequest(hinted)).toEqual({
      method: 'elicitation/create',
      params: { message: 'm', _meta: { other: 1 } },
    });
    expect(embeddedRequest(elicit({ _meta: { 'moat.dev/inputKey': 'k' } })).params).toEqual({ message: 'm' });
  });
});
