// The public schema surface: the known enumeration values, the field rules, every object schema, the
// notification with its helpers, and the inferred types.
export * from "./enums.js";
export * from "./events.js";
export * from "./notification.js";
export * from "./notification-helpers.js";
export * from "./payment-detail.js";
export * from "./primitives.js";
export * from "./shared.js";
export type * from "./types.js";
