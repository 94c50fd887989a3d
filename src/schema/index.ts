export * from "./enums.js";
export * from "./primitives.js";
export * from "./shared.js";
export * from "./payment-detail.js";
export * from "./events.js";
export * from "./notification.js";
export * from "./event-object.js";
export type * from "./types.js";
