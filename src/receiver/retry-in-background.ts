const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms).unref?.();
  });

/**
 * Retry a write with exponential backoff (100 ms doubling, capped at 5 s) for about a minute: long
 * enough to ride out a Redis restart or failover, short enough not to pile up forever.
 */
export async function retryInBackground(write: () => unknown, attempts = 16): Promise<boolean> {
  for (let i = 0; i < attempts; i++) {
    await sleep(Math.min(5_000, 100 * 2 ** i));
    try {
      await write();
      return true;
    } catch {
      // the store is still unreachable; try again after the next pause
    }
  }
  return false;
}
