const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms).unref?.();
  });

/** Pause between tries: short, so the write lands within about a second of the store coming back. */
const MAX_PAUSE_MS = 1_000;
/** Give up after this long; by then the record's lease has long lapsed and retention decides. */
const GIVE_UP_AFTER_MS = 10 * 60 * 1000;

/**
 * Retry a write (a completion record) until it lands: 100 ms, doubling to at most 1 s between tries,
 * for up to ten minutes. The pause stays short because the claim's lease keeps running on the
 * store's clock while it is unreachable: the sooner the completion lands once the store is back, the
 * smaller the window in which a redelivery could find the lease lapsed and run the handler again.
 */
export async function retryInBackground(write: () => unknown, giveUpAfterMs = GIVE_UP_AFTER_MS): Promise<boolean> {
  const deadline = Date.now() + giveUpAfterMs;
  for (let i = 0; Date.now() < deadline; i++) {
    await sleep(Math.min(MAX_PAUSE_MS, 100 * 2 ** i));
    try {
      await write();
      return true;
    } catch {
      // the store is still unreachable; try again after the next pause
    }
  }
  return false;
}
