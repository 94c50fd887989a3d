import { optionError } from "../shared/errors.js";
import { DEFAULT_LANE_MAX_LENGTH } from "./lane-store.js";

/** The option bounding a store's lanes, under its name and under the name it had first. */
export interface LaneMaxLengthOption {
  /**
   * With `ordering` through a durable queue: the most notifications one subscription's lane holds;
   * one more is answered 503 with `Retry-After`, and the sender keeps it. Default 10,000.
   */
  laneMaxLength?: number;
  /** @deprecated The first name of `laneMaxLength`; still accepted, and may not differ from it. */
  mailboxMaxLength?: number;
}

/**
 * The store's lane bound from either name. Both given with different values is a mistake the store
 * cannot settle by choosing one: it is refused at construction, naming the option to correct.
 */
export function laneMaxLengthOf(what: string, options: LaneMaxLengthOption): number {
  const { laneMaxLength, mailboxMaxLength } = options;
  if (laneMaxLength !== undefined && mailboxMaxLength !== undefined && laneMaxLength !== mailboxMaxLength)
    throw optionError(
      new TypeError(
        `${what}: laneMaxLength (${laneMaxLength}) and its deprecated name mailboxMaxLength (${mailboxMaxLength}) differ; set laneMaxLength only`,
      ),
      "MW_INVALID_OPTION",
      "mailboxMaxLength",
    );
  return laneMaxLength ?? mailboxMaxLength ?? DEFAULT_LANE_MAX_LENGTH;
}
