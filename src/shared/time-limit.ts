// The one place a promise is raced against a timer. The task itself is never cancelled: these only
// stop waiting for it.

/** Settles as `task` does, or rejects with `error()` once `ms` pass first. */
export async function withTimeout<T>(task: Promise<T>, ms: number, error: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(error()), Math.max(0, ms));
  });
  try {
    return await Promise.race([task, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** True once `task` settles (fulfilled or rejected) within `ms`, false if `ms` pass first. Never rejects. */
export async function settlesWithin(task: Promise<unknown>, ms: number): Promise<boolean> {
  const settled = task.then(
    () => true,
    () => true,
  );
  return withTimeout(settled, ms, () => new Error("late")).catch(() => false);
}
