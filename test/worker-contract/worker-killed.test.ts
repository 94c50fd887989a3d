import { describe, expect, it } from "vitest";
import { notification } from "../support/notifications.js";
import { eventually } from "../support/redis.js";
import { TRANSPORTS, transportBed } from "./transports.js";

/** Short leases, so a dead worker's job is another's within seconds. */
const LEASE_MS = "1000";

describe.each(TRANSPORTS)("a worker killed (SIGKILL) mid-handler, on $name", (transport) => {
  const bed = transportBed(transport, "killed");

  it("another worker runs its notification to completion: one effect, the others run once", {
    timeout: 120_000,
  }, async () => {
    const line = bed.line("killed");
    const doomed = await bed.spawn("killed", { LEASE_MS, HANDLER_MS: "60000" });
    const cutOff = notification();
    expect(await line.deliver(cutOff)).toBe(200);
    await eventually(async () => (await bed.rows("started", cutOff.id)) === 1, 15_000, "the handler to start");
    doomed.kill("SIGKILL");
    expect(await doomed.exited).toBeNull();
    expect(await bed.rows("effects", cutOff.id)).toBe(0);

    await bed.spawn("killed", { LEASE_MS });
    const later = Array.from({ length: 5 }, () => notification());
    for (const body of later) expect(await line.deliver(body)).toBe(200);
    const completed = async () =>
      (await Promise.all([cutOff, ...later].map((body) => bed.store.get(body.id)))).every(
        (record) => record?.state === "completed",
      );
    await eventually(completed, 30_000, "every notification to complete");

    expect(await bed.rows("started", cutOff.id)).toBe(2);
    expect(await bed.rows("effects", cutOff.id)).toBe(1);
    for (const body of later) expect(await bed.rows("effects", body.id)).toBe(1);
    // Delivered again, it is answered as the completed notification it is, and runs no more.
    expect(await line.deliver(cutOff)).toBe(200);
    expect(await bed.rows("started", cutOff.id)).toBe(2);
  });
});
