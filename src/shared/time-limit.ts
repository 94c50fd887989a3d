// The one place a promise is raced against a timer. The task itself is never cancelled: these only
// stop waiting for it.

/**
 * Settles as `task` does, or as `late()` does (its value, or what it throws) once `ms` pass first. The
 * timer is cleared whichever comes first, so a settled task leaves nothing pending.
 */
export async function raceTimer<T>(task: Promise<T>, ms: number, late: () => T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<T>((resolve, reject) => {
    timer = setTimeout(
      () => {
        try {
          resolve(late());
        } catch (err) {
          reject(err);
        }
      },
      Math.max(0, ms),
    );
  });
  try {
    return await Promise.race([task, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** Settles as `task` does, or rejects with `error()` once `ms` pass first. */
export function withTimeout<T>(task: Promise<T>, ms: number, error: () => Error): Promise<T> {
  return raceTimer(task, ms, () => {
    throw error();
  });
}

/** True once `task` settles (fulfilled or rejected) within `ms`, false if `ms` pass first. Never rejects. */
export function settlesWithin(task: Promise<unknown>, ms: number): Promise<boolean> {
  const settled = task.then(
    () => true,
    () => true,
  );
  return raceTimer(settled, ms, () => false);
}
