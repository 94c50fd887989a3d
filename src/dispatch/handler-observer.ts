// The hook dispatch calls around each handler run. Dispatch defines it and telemetry implements it
// (telemetry/observe-handler.ts), so dispatch never depends on telemetry.

/** What a handler span says about the notification it ran for. */
export interface HandlerFields {
  notificationId: string;
  eventType: string;
  attempt: number;
  source: "receiver" | "worker";
}

/** Runs a handler (`run`) observed as `observeHandler` does, the source and parent already chosen. */
export type HandlerObserver = <T>(fields: Omit<HandlerFields, "source">, run: () => Promise<T>) => Promise<T>;
