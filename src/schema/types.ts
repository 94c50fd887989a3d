import type { z } from "zod";
import type * as enums from "./enums.js";
import type * as events from "./events.js";
import type * as notification from "./notification.js";
import type * as paymentDetail from "./payment-detail.js";
import type * as shared from "./shared.js";

// Every type is inferred from its schema, so the two cannot disagree.

export type SubscriptionNotification = z.output<typeof notification.subscriptionNotificationSchema>;
export type SubscriptionResource = z.output<typeof notification.subscriptionResourceSchema>;
export type Subscriber = z.output<typeof notification.subscriberSchema>;
export type Product = z.output<typeof notification.productSchema>;

export type SubscriptionEvent = z.output<typeof events.subscriptionEventSchema>;
export type RenewalEvent = z.output<typeof events.renewalEventSchema>;
export type UnsubscriptionEvent = z.output<typeof events.unsubscriptionEventSchema>;
export type SuspendedEvent = z.output<typeof events.suspendedEventSchema>;
export type ResumedEvent = z.output<typeof events.resumedEventSchema>;

export type PaymentDetail = z.output<typeof paymentDetail.paymentDetailSchema>;
export type CardAdditionData = z.output<typeof paymentDetail.cardAdditionDataSchema>;

export type Money = z.output<typeof shared.moneySchema>;
export type Address = z.output<typeof shared.addressSchema>;
export type Link = z.output<typeof shared.linkSchema>;
export type LinkV2 = z.output<typeof shared.linkV2Schema>;
export type StatusDetail = z.output<typeof shared.statusDetailSchema>;
export type CardInfo = z.output<typeof shared.cardInfoSchema>;
export type Tax = z.output<typeof shared.taxSchema>;
export type Breakdown = z.output<typeof shared.breakdownSchema>;
export type AmountWithBreakdown = z.output<typeof shared.amountWithBreakdownSchema>;
export type Payee = z.output<typeof shared.payeeSchema>;
export type Item = z.output<typeof shared.itemSchema>;
export type ExternalAmount = z.output<typeof shared.externalAmountSchema>;
export type PurchaseUnit = z.output<typeof shared.purchaseUnitSchema>;
export type InternalTransactionTraceInfo = z.output<typeof shared.internalTransactionTraceInfoSchema>;
export type InternalMerchantAdditionData = z.output<typeof shared.internalMerchantAdditionDataSchema>;
export type ChannelAdditionData = z.output<typeof shared.channelAdditionDataSchema>;

/** The event types this version knows. */
export type KnownEventType = (typeof enums.EVENT_TYPES)[number];
/** What `event_type` may hold: a known value or one the platform added later. */
export type EventType = SubscriptionNotification["event_type"];
export type SubscriptionStatus = SubscriptionResource["subscription_status"] & {};
export type PaymentResult = PaymentDetail["payment_result"] & {};
export type OrderStatus = PaymentDetail["status"] & {};

/** A resource key that holds an event object. */
export type EventObjectKey = (typeof notification.EVENT_OBJECT_KEYS)[number];
/** One event object tagged with its key, e.g. `{ kind: "renewal_event", event: RenewalEvent }`. */
export type EventObject = {
  [K in EventObjectKey]: { kind: K; event: NonNullable<SubscriptionResource[K]> };
}[EventObjectKey];
/** Any one event object a resource may carry. */
export type AnyEventObject = EventObject["event"];
