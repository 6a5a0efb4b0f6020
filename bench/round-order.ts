/**
 * The order of `n` cells in round `round`: the first round as listed, every later one a fixed
 * shuffle of it (a seeded generator, so runs are repeatable). With the same order every round,
 * one cell always ran right after direct and the other cells always after the same neighbour, and
 * whatever a run leaves behind (the backend's GC after direct's load, other proxies' idle work)
 * fell on the same cell every time.
 */
export function roundOrder(n: number, round: number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  let seed = round * 2654435761;
  for (let i = n - 1; i > 0 && round > 0; i--) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    const j = seed % (i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}
