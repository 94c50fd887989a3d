export * from "./events.js";
export * from "./order.js";
export * from "./order-request.js";
export * from "./pagination.js";
export * from "./query.js";
export * from "./refund.js";
export * from "./request-shared.js";
