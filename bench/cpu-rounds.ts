/**
 * In-process timing for a shared machine: CPU time (`process.cpuUsage`, user + system) instead of wall
 * time, so a slice of the core given to another process is not counted; the steps take turns batch by
 * batch, so a slow spell lands on all of them; each figure is the median batch.
 */
export interface Step {
  name: string;
  /** Builds the inputs of one batch (not timed) and returns the operation to time for input `i`. */
  prepare(size: number): ((i: number) => unknown) | Promise<(i: number) => unknown>;
  /** The operation returns a promise to wait for. */
  async?: boolean;
}

export interface StepTiming {
  name: string;
  /** CPU µs per operation (garbage collection included), median batch. */
  us: number;
}

/** CPU µs per operation of one batch of `size` operations of `step`. */
export async function timeBatch(step: Step, size: number): Promise<number> {
  const run = await step.prepare(size);
  const started = process.cpuUsage();
  if (step.async) for (let i = 0; i < size; i++) await run(i);
  else for (let i = 0; i < size; i++) run(i);
  const used = process.cpuUsage(started);
  return (used.user + used.system) / size;
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
export const round2 = (value: number) => Math.round(value * 100) / 100;

export async function timeSteps(
  steps: Step[],
  { rounds, size, warmup }: { rounds: number; size: number; warmup: number },
): Promise<StepTiming[]> {
  for (const step of steps) await timeBatch(step, warmup);
  const samples = steps.map(() => [] as number[]);
  for (let round = 0; round < rounds; round++) {
    for (const [i, step] of steps.entries()) samples[i]!.push(await timeBatch(step, size));
  }
  return steps.map((step, i) => ({ name: step.name, us: round2(median(samples[i]!)) }));
}
