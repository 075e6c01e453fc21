/**
 * Indexing where a missing element is a bug (or input we checked the length of), not a silent
 * `undefined`: what `list[i]` gives under noUncheckedIndexedAccess, made a RangeError at the spot.
 */
export function itemAt<T>(list: ArrayLike<T>, index: number): T {
  const item = list[index];
  if (item === undefined) throw new RangeError(`index ${index} is outside the ${list.length} items`);
  return item;
}
