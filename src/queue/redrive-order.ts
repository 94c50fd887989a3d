/** Where a dead letter stood in its ordered lane, as its job data says: none when it is unordered. */
export interface LanePlace {
  key: string;
  position?: string | undefined;
}

/** Dead letters grouped as a redrive puts them back: see `inRedriveOrder`. */
export interface RedriveOrder<T> {
  /** Dead letters of no lane, as found. */
  unordered: T[];
  /** Each ordered lane's dead letters, oldest first; lanes as first found. */
  lanes: T[][];
}

/**
 * The one order every redrive (the CLI's on BullMQ and on pg-boss, the admin API's and so the
 * console's) puts dead letters back in: an ordered lane's by position, then id, as the lane itself
 * orders them, oldest first, so none runs after a newer one of its lane and turns stale; the others
 * as found. Positions in their sortable form compare byte by byte (ASCII), as the stores compare them.
 */
export function inRedriveOrder<T>(
  letters: Iterable<T>,
  placeOf: (letter: T) => LanePlace | undefined,
  idOf: (letter: T) => string,
): RedriveOrder<T> {
  const unordered: T[] = [];
  const lanes = new Map<string, T[]>();
  for (const letter of letters) {
    const key = placeOf(letter)?.key;
    if (key === undefined) unordered.push(letter);
    else {
      const lane = lanes.get(key);
      if (lane) lane.push(letter);
      else lanes.set(key, [letter]);
    }
  }
  const position = (letter: T) => placeOf(letter)?.position ?? "";
  for (const lane of lanes.values())
    lane.sort((a, b) => compare(position(a), position(b)) || compare(idOf(a), idOf(b)));
  return { unordered, lanes: [...lanes.values()] };
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
