import type { z } from "zod";
import type * as schemas from "./schemas/index.js";

// Every type is inferred from its schema. Requests use the input side (what a caller may pass),
// responses the output side (what the schema hands back).

export type CreateOrderRequest = z.input<typeof schemas.createOrderRequestSchema>;
export type Order = z.output<typeof schemas.orderSchema>;
export type QueriedOrder = z.output<typeof schemas.queriedOrderSchema>;
export type OrderRefundState = z.output<typeof schemas.orderRefundStateSchema>;
export type Payer = z.input<typeof schemas.payerSchema>;
export type ApplicationContext = z.input<typeof schemas.applicationContextSchema>;
export type BrowserInfo = z.input<typeof schemas.browserInfoSchema>;

export type RefundRequest = z.input<typeof schemas.refundRequestSchema>;
export type RefundUnitRequest = z.input<typeof schemas.refundUnitRequestSchema>;
export type RefundOrder = z.output<typeof schemas.refundOrderSchema>;
export type RefundUnit = z.output<typeof schemas.refundUnitSchema>;
export type RefundStatus = RefundOrder["refund_status"] & {};

export type MonthFilters = z.input<typeof schemas.monthFiltersSchema>;

/** The provisional order and refund event payloads (see `orderEventSchema`). */
export type OrderEvent = z.output<typeof schemas.orderEventSchema>;
export type RefundEvent = z.output<typeof schemas.refundEventSchema>;
