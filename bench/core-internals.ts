// The core's internal steps the per-step benchmark times one by one. Not public API: when the core's
// files move, only this list changes.

export { handlerContext, runHandler } from "../src/dispatch/run-claimed.js";
export { handlerLogger } from "../src/logging/logger.js";
export { respond } from "../src/receiver/answer-and-log.js";
export { fingerprintOf } from "../src/receiver/fingerprint.js";
export { normalizeHeaders } from "../src/receiver/intake.js";
export { parseJsonObject } from "../src/receiver/parse-json.js";
