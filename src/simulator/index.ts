// merchant-webhooks/simulator: a local payment platform to develop and test against, offline.
export { createPlatformSimulator, type PlatformSimulator } from "./create-platform-simulator.js";
export { type ChaosOptions, type DeliverySigner, standardWebhooksDeliverySigner } from "./deliverer.js";
export type { DeliveryAttempt, DeliveryKind, DeliveryRecord, UndeliveredSummary } from "./delivery-log.js";
export { LIST_TABLES, type ListTableName, SIMULATED_PROFIT_SHARING, type SimulatedRecord } from "./list-tables.js";
export { DEFAULT_ATTEMPT_TIMEOUT_MS, DEFAULT_RETRY_SCHEDULE_MS, type PlatformSimulatorOptions } from "./options.js";
export type { PayOptions } from "./order-book.js";
export { DEFAULT_MERCHANT_ID } from "./order-book.js";
export { runScenario, SCENARIO_COMMANDS, ScenarioError, scenarioRunner } from "./scenario.js";
export type { CreateSubscriptionInput, SimulatedSubscription } from "./subscriptions.js";
