/** Round to the microsecond, in ms. */
export const ms = (value: number) => Math.round(value * 1000) / 1000;

export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** Median and p99 of latency samples in ms. */
export const latencySummary = (values: number[]) => ({
  median_ms: ms(quantile(values, 0.5)),
  p99_ms: ms(quantile(values, 0.99)),
});
