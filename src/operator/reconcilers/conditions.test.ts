import { describe, expect, it } from 'vitest';
import { stampConditions } from './conditions.js';

const earlier = '2026-01-01T00:00:00Z';
const now = new Date('2026-02-02T10:20:30.456Z');

describe('stampConditions', () => {
  it('keeps the transition time while the status stays, moves it when the status changes', () => {
    const previous = [
      { type: 'Valid', status: 'True' as const, reason: 'A', message: '', lastTransitionTime: earlier },
      {
        type: 'DeletionBlocked',
        status: 'False' as const,
        reason: 'B',
        message: '',
        lastTransitionTime: earlier,
      },
    ];
    const stamped = stampConditions(
      previous,
      [
        { type: 'Valid', status: 'True', reason: 'A2', message: 'm' },
        { type: 'DeletionBlocked', status: 'True', reason: 'B', message: 'x' },
        { type: 'New', status: 'False', reason: 'C', message: '' },
      ],
      3,
      now,
    );
    expect(stamped).toEqual([
      {
        type: 'Valid',
        status: 'True',
        reason: 'A2',
        message: 'm',
        lastTransitionTime: earlier,
        observedGeneration: 3,
      },
      {
        type: 'DeletionBlocked',
        status: 'True',
        reason: 'B',
        message: 'x',
        lastTransitionTime: '2026-02-02T10:20:30Z',
        observedGeneration: 3,
      },
      {
        type: 'New',
        status: 'False',
        reason: 'C',
        message: '',
        lastTransitionTime: '2026-02-02T10:20:30Z',
        observedGeneration: 3,
      },
    ]);
  });
});
