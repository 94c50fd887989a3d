import PQueue from "p-queue";

/**
 * Concurrency slots for synchronous handling, with p-queue: the answer still waits for the handler,
 * but only `concurrency` handlers run at once and only `maxPending` requests wait for a slot.
 */
export function handlerSlots({
  concurrency,
  maxPending = concurrency * 10,
}: {
  concurrency: number;
  maxPending?: number;
}) {
  const queue = new PQueue({ concurrency });
  return {
    full: () => queue.size >= maxPending,
    run: <T>(task: () => Promise<T>): Promise<T> => queue.add(task) as Promise<T>,
  };
}
