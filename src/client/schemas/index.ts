export * from "./request-shared.js";
export * from "./order-request.js";
export * from "./order.js";
export * from "./query.js";
export * from "./refund.js";
export * from "./pagination.js";
export * from "./events.js";
