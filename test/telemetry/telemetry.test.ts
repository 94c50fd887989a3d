import { describe, expect, it } from "vitest";
import { headerGetter } from "../../src/telemetry/header-getter.js";
import { loadOtelApi, otelApiLoading } from "../../src/telemetry/load-api.js";
import { observeReceive } from "../../src/telemetry/observe-receive.js";
import { currentTelemetry } from "../../src/telemetry/telemetry.js";
import { installOtel } from "./fixtures/otel.js";

describe("telemetry without and with an SDK", () => {
  it("records nothing until an SDK registers providers, and stops when they are removed", async () => {
    loadOtelApi();
    await otelApiLoading();
    expect(currentTelemetry()).toBeUndefined();
    // Without an SDK every request shares one pass-through observation: nothing is made per notification.
    expect(observeReceive({ traceparent: "x" })).toBe(observeReceive({}));

    const otel = installOtel();
    const telemetry = currentTelemetry();
    expect(telemetry?.tracer).toBeDefined();
    expect(telemetry?.metrics).toBeDefined();
    expect(currentTelemetry()).toBe(telemetry);

    await otel.uninstall();
    expect(currentTelemetry()).toBeUndefined();
  });
});

describe("headerGetter", () => {
  it("reads traceparent from Node's header object, any-case records and Fetch Headers", () => {
    const value = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    expect(headerGetter.get({ traceparent: value }, "traceparent")).toBe(value);
    expect(headerGetter.get({ TraceParent: value }, "traceparent")).toBe(value);
    expect(headerGetter.get(new Headers({ traceparent: value }), "traceparent")).toBe(value);
    expect(headerGetter.get({ "content-type": "application/json" }, "traceparent")).toBeUndefined();
  });
});
