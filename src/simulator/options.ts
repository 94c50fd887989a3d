import { optionError } from "../shared/errors.js";
import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import type { StandardWebhooksSecret } from "../verify/standard-webhooks-verifier.js";
import type { AttemptListener, ChaosOptions, DeliverySigner } from "./deliverer.js";

const SIMULATOR_KEYS = {
  webhookUrl: true,
  secret: true,
  sign: true,
  retrySchedule: true,
  timeScale: true,
  attemptTimeoutMs: true,
  concurrency: true,
  chaos: true,
  seed: true,
  host: true,
  onAttempt: true,
} as const satisfies KnownKeys<PlatformSimulatorOptions>;
const CHAOS_KEYS = {
  duplicateRate: true,
  reorderWindowMs: true,
  reorderRate: true,
  reserializeRetries: true,
  delayMs: true,
  dropRate: true,
} as const satisfies KnownKeys<ChaosOptions>;

/**
 * The platform's retry schedule is not published. This default follows the published schedule of
 * Standard Webhooks senders (Svix): immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h.
 */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [
  0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
];

export const DEFAULT_ATTEMPT_TIMEOUT_MS = 10_000;

export interface PlatformSimulatorOptions {
  /** Where subscription notifications go (the merchant's HandleWebhook). */
  webhookUrl?: string;
  /** Sign every delivery with Standard Webhooks using this `whsec_…` secret. Without it (or `sign`), unsigned. */
  secret?: StandardWebhooksSecret;
  /** Sign with another scheme instead; wins over `secret`. */
  sign?: DeliverySigner;
  /** Delay before each attempt, in ms (its length is the number of attempts). Default `DEFAULT_RETRY_SCHEDULE_MS`. */
  retrySchedule?: readonly number[];
  /** Multiplies the schedule and chaos delays: 0.001 turns 5 min into 300 ms for a test. Default 1. */
  timeScale?: number;
  /** Time limit of one attempt (not scaled). Default 10 s. */
  attemptTimeoutMs?: number;
  /** Attempts in flight at once. Default 16. */
  concurrency?: number;
  chaos?: ChaosOptions;
  /** Seed of the chaos draws, so a run can be repeated. Default: random. */
  seed?: number;
  /** Interface the API listens on. Default 127.0.0.1. */
  host?: string;
  /** Called after every delivery attempt, e.g. to show progress. */
  onAttempt?: AttemptListener;
}

/** The longest delay a Node timer keeps; a longer one fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export function checkOptions(options: PlatformSimulatorOptions): void {
  rejectUnknownKeys("createPlatformSimulator", options, Object.keys(SIMULATOR_KEYS));
  rejectUnknownKeys("createPlatformSimulator: chaos", options.chaos, Object.keys(CHAOS_KEYS));
  const schedule = options.retrySchedule ?? DEFAULT_RETRY_SCHEDULE_MS;
  if (schedule.length === 0 || schedule.some((ms) => !(ms >= 0)))
    throw optionError(
      new RangeError("retrySchedule must list one or more delays >= 0"),
      "MW_INVALID_OPTION",
      "retrySchedule",
    );
  const scale = options.timeScale ?? 1;
  if (!(scale >= 0 && Number.isFinite(scale)))
    throw optionError(new RangeError("timeScale must be a finite number >= 0"), "MW_INVALID_OPTION", "timeScale");
  const timeout = options.attemptTimeoutMs;
  if (timeout !== undefined && !(timeout > 0 && timeout <= MAX_TIMER_MS))
    throw optionError(
      new RangeError(`attemptTimeoutMs must be from 1 to ${MAX_TIMER_MS} ms, got ${timeout}`),
      "MW_INVALID_TIMEOUT",
      "attemptTimeoutMs",
    );
  for (const name of ["duplicateRate", "reorderRate", "dropRate"] as const) {
    const rate = options.chaos?.[name];
    if (rate !== undefined && !(rate >= 0 && rate <= 1))
      throw optionError(
        new RangeError(`chaos.${name} must be between 0 and 1, got ${rate}`),
        "MW_INVALID_OPTION",
        `chaos.${name}`,
      );
  }
  // Every wait is a delay times the scale; past the timer limit Node would fire it after 1 ms.
  const delays = [...schedule, options.chaos?.reorderWindowMs ?? 0, options.chaos?.delayMs ?? 0];
  const longest = Math.max(...delays.map((ms) => (ms >= 0 ? ms : Number.NaN))) * scale;
  if (!(longest <= MAX_TIMER_MS))
    throw optionError(
      new RangeError(
        `the longest scaled delay (${longest} ms) is beyond ${MAX_TIMER_MS} ms, the most a timer can wait: lower timeScale or the delays`,
      ),
      "MW_INVALID_OPTION",
      "timeScale",
    );
  if (options.webhookUrl !== undefined) new URL(options.webhookUrl);
}
