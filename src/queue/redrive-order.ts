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

/** How a redrive puts each dead letter back, given to `redriveInOrder`. */
export interface RedriveSteps<T> {
  /** Put one back: undefined when it went back to work, else why not. `after`: the one of its lane put back just before. */
  redriveOne(letter: T, after: T | undefined): Promise<string | undefined>;
  /**
   * Before the next of its lane goes back: whether the one put back has settled (run by a worker).
   * False leaves the rest of its lane where it is, each with why. Without it, the next goes back at once.
   */
  settled?(letter: T): Promise<boolean>;
  /** Lanes put back at a time (each lane's letters one after another). Default: every lane at once. */
  lanesAtOnce?: number;
}

export interface RedriveOutcome<T> {
  /** Put back, unordered first, then each lane oldest first. */
  done: T[];
  /** Not put back, each with why. */
  skipped: Array<{ letter: T; reason: string }>;
}

/**
 * The one redrive every path runs (the CLI's on each queue and store, the admin API's and so the
 * console's): dead letters in `inRedriveOrder`, an ordered lane's one after another, oldest first, so
 * none runs after a newer one of its lane and turns stale; lanes side by side.
 */
export async function redriveInOrder<T>(
  letters: Iterable<T>,
  placeOf: (letter: T) => LanePlace | undefined,
  idOf: (letter: T) => string,
  steps: RedriveSteps<T>,
): Promise<RedriveOutcome<T>> {
  const { unordered, lanes } = inRedriveOrder(letters, placeOf, idOf);
  const all = [...unordered.map((letter) => [letter]), ...lanes];
  const outcomes = all.map((): RedriveOutcome<T> => ({ done: [], skipped: [] }));
  const walk = async (lane: T[], out: RedriveOutcome<T>) => {
    let after: T | undefined;
    for (let i = 0; i < lane.length; i++) {
      const letter = lane[i]!;
      const why = await steps.redriveOne(letter, after);
      if (why !== undefined) {
        out.skipped.push({ letter, reason: why });
        continue;
      }
      out.done.push(letter);
      after = letter;
      if (i === lane.length - 1 || !steps.settled || (await steps.settled(letter))) continue;
      const reason = `waiting for ${idOf(letter)}, older in its subscription, to finish: redrive it after`;
      for (const rest of lane.slice(i + 1)) out.skipped.push({ letter: rest, reason });
      return;
    }
  };
  let next = 0;
  const runner = async () => {
    while (next < all.length) {
      const at = next++;
      await walk(all[at]!, outcomes[at]!);
    }
  };
  const width = Math.max(1, Math.min(all.length, steps.lanesAtOnce ?? all.length));
  await Promise.all(Array.from({ length: width }, runner));
  return {
    done: outcomes.flatMap((out) => out.done),
    skipped: outcomes.flatMap((out) => out.skipped),
  };
}
