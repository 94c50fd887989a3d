import { describe, expect, it } from "vitest";
import { raceTimer, settlesWithin, withTimeout } from "../../src/shared/time-limit.js";

const never = () => new Promise<never>(() => {});

describe("the time limit on a promise", () => {
  it("withTimeout: passes on the task's value or rejection, or rejects with the given error when late", async () => {
    await expect(withTimeout(Promise.resolve(7), 1_000, () => new Error("late"))).resolves.toBe(7);
    await expect(withTimeout(Promise.reject(new Error("own")), 1_000, () => new Error("late"))).rejects.toThrow("own");
    await expect(withTimeout(never(), 10, () => new Error("late"))).rejects.toThrow("late");
  });

  it("raceTimer: passes on the task's value or rejection, or settles as the late callback does", async () => {
    await expect(raceTimer(Promise.resolve(7), 1_000, () => 0)).resolves.toBe(7);
    await expect(raceTimer(Promise.reject(new Error("own")), 1_000, () => 0)).rejects.toThrow("own");
    await expect(raceTimer(never(), 10, () => 0)).resolves.toBe(0);
    await expect(
      raceTimer(never(), 10, () => {
        throw new Error("thrown late");
      }),
    ).rejects.toThrow("thrown late");
  });

  it("settlesWithin: true for a task that ends either way in time, false for one that does not", async () => {
    expect(await settlesWithin(Promise.resolve(), 1_000)).toBe(true);
    expect(await settlesWithin(Promise.reject(new Error("x")), 1_000)).toBe(true);
    expect(await settlesWithin(never(), 10)).toBe(false);
  });
});
