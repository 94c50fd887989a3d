import { DEFAULT_LANE_MAX_LENGTH } from "./lane-store.js";

/** The option bounding a store's lanes. */
export interface LaneMaxLengthOption {
  /**
   * With `ordering` through a durable queue: the most notifications one subscription's lane holds;
   * one more is answered 503 with `Retry-After`, and the sender keeps it. Default 10,000.
   */
  laneMaxLength?: number;
}

/** The store's lane bound. */
export function laneMaxLengthOf(options: LaneMaxLengthOption): number {
  return options.laneMaxLength ?? DEFAULT_LANE_MAX_LENGTH;
}
