/**
 * Status conditions as observations: a condition keeps its `lastTransitionTime` while its status
 * stays the same, so writing the same observations twice changes nothing (and wakes no watcher).
 */
import type { Condition } from '../crd/index.js';

export type ConditionInput = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

/** `next` stamped with `generation`, each keeping the transition time it had in `previous`. */
export function stampConditions(
  previous: readonly Condition[] | undefined,
  next: readonly ConditionInput[],
  generation: number | undefined,
  now = new Date(),
): Condition[] {
  const time = now.toISOString().replace(/\.\d+Z$/, 'Z');
  return next.map((condition) => {
    const before = previous?.find((c) => c.type === condition.type);
    return {
      ...condition,
      lastTransitionTime: before && before.status === condition.status ? before.lastTransitionTime : time,
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
    };
  });
}
