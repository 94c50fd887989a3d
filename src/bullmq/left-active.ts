/**
 * How long, all told, the holder of an ordered lane waits for a waiting notification's own job to leave the active
 * list. That job is active on another worker only from its claim, which met the lane held, to its move
 * to the delayed set, where it waits a whole lease as the lane's safety net: a few round trips.
 */
const LEFT_ACTIVE_WAITS_MS = [25, 50, 100, 200, 400, 400, 400, 400] as const;

/**
 * Try `act` on a waiting notification's own job until it takes (true), waiting between tries while that job is
 * still active on another worker (false); false once the waits are spent or the worker stops (`stop`).
 * An `act` that rejects (Redis away) ends the tries: the caller decides what its failure means.
 */
export async function onceLeftActive(act: () => Promise<boolean>, stop: AbortSignal): Promise<boolean> {
  for (const waitMs of LEFT_ACTIVE_WAITS_MS) {
    if (await act()) return true;
    if (stop.aborted) return false;
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
  return act();
}
