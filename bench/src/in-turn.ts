/**
 * The servers of a measure in the order its run `run` takes them: each goes first in turn, so that none always
 * meets a warmer or a cooler machine.
 */
export function inTurn<Kind>(kinds: readonly Kind[], run: number): Kind[] {
  const first = run % kinds.length;
  return [...kinds.slice(first), ...kinds.slice(0, first)];
}
