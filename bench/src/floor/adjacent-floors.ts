/**
 * The floor runs just before and just after run `index`, the ones a measurement is compared with: this
 * host's speed drifts by a third within minutes, so a floor measured at the start of a run and another
 * at its end can both miss the spell a measurement in between fell in.
 */
export function adjacentFloors<T>(runs: readonly T[], index: number, isFloor: (run: T) => boolean): T[] {
  const before = runs.slice(0, index).findLast(isFloor);
  const after = runs.slice(index + 1).find(isFloor);
  return [before, after].filter((run): run is T => run !== undefined);
}
