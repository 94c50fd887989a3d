/** When the record is held by someone else: first look again soon, then back off, up to this. */
export const RECHECK_MIN_MS = 50;
export const RECHECK_MAX_MS = 5_000;
/** When the store cannot be reached: look again after this long. */
export const STORE_RETRY_MS = 1_000;

/** 50 ms after a job's first look that found its record held elsewhere, doubling with each, up to 5 s. */
export function recheckDelay(postponements: number): number {
  return Math.min(RECHECK_MAX_MS, RECHECK_MIN_MS * 2 ** Math.min(Math.max(0, postponements), 10));
}
