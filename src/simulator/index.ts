// merchant-webhooks/simulator: a local payment platform to develop and test against, offline.
export { createPlatformSimulator, type PlatformSimulator } from "./create-platform-simulator.js";
export { DEFAULT_RETRY_SCHEDULE_MS, DEFAULT_ATTEMPT_TIMEOUT_MS, type PlatformSimulatorOptions } from "./options.js";
export { standardWebhooksDeliverySigner, type ChaosOptions, type DeliverySigner } from "./deliverer.js";
export type { DeliveryAttempt, DeliveryKind, DeliveryRecord, UndeliveredSummary } from "./delivery-log.js";
export type { CreateSubscriptionInput, SimulatedSubscription } from "./subscriptions.js";
export type { PayOptions } from "./order-book.js";
export { LIST_TABLES, SIMULATED_PROFIT_SHARING, type ListTableName, type SimulatedRecord } from "./list-tables.js";
export { DEFAULT_MERCHANT_ID } from "./order-book.js";
export { runScenario, scenarioRunner, ScenarioError, SCENARIO_COMMANDS } from "./scenario.js";
