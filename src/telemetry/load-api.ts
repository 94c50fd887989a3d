import type * as OtelApiModule from "@opentelemetry/api";

export type OtelApi = typeof OtelApiModule;

let api: OtelApi | undefined;
let loading: Promise<void> | undefined;
let settled = false;

/**
 * `@opentelemetry/api` is an optional peer dependency, so it is loaded with a dynamic import whose
 * failure (not installed) leaves telemetry off. An import works from the ESM and the CommonJS build
 * alike, and bundlers (esbuild, webpack) accept it unresolved because the failure is handled. Started
 * once, by the first receiver or worker made.
 */
export function loadOtelApi(): void {
  loading ??= import("@opentelemetry/api")
    .then(
      (module) => {
        // Node finds the named exports of the API's CommonJS build; a loader that does not puts them all under `default`.
        api = typeof module.trace === "object" ? module : (module as unknown as { default: OtelApi }).default;
      },
      () => {},
    )
    .finally(() => {
      settled = true;
    });
}

/** The API, once loaded; undefined while loading and when it is not installed. */
export function otelApi(): OtelApi | undefined {
  return api;
}

/**
 * The pending load, for the first notifications to wait on so none goes unobserved; undefined once the
 * load has settled, so later notifications do not wait at all.
 */
export function otelApiLoading(): Promise<void> | undefined {
  return settled ? undefined : loading;
}
