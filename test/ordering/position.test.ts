import { describe, expect, it } from "vitest";
import { isBefore, positionToRfc3339, sortablePosition } from "../../src/idempotency/position.js";

const at = (value: string | Date) => {
  const position = sortablePosition(value);
  if (position === undefined) throw new Error(`not a position: ${String(value)}`);
  return position;
};

describe("sortablePosition", () => {
  it("turns any offset into the same UTC instant", () => {
    expect(at("2026-03-01T10:00:00+08:00")).toBe("2026-03-01T02:00:00");
    expect(at("2026-03-01T02:00:00Z")).toBe("2026-03-01T02:00:00");
    expect(at("2026-02-28T21:30:00-04:30")).toBe("2026-03-01T02:00:00");
    expect(at("2026-03-01t02:00:00z")).toBe("2026-03-01T02:00:00");
  });

  it("orders +08:00 and Z by instant, where the strings sort the other way", () => {
    const cancelled = "2026-03-01T09:00:00+08:00"; // 01:00Z
    const renewed = "2026-03-01T02:00:00Z";
    expect(cancelled > renewed).toBe(true); // as strings: wrong
    expect(isBefore(at(cancelled), at(renewed))).toBe(true);
    expect(isBefore(at(renewed), at(cancelled))).toBe(false);
  });

  it("counts fractional seconds digit for digit, past milliseconds and nanoseconds", () => {
    const times = [
      "2026-03-01T02:00:00Z",
      "2026-03-01T02:00:00.000000001Z",
      "2026-03-01T02:00:00.0000000015Z",
      "2026-03-01T02:00:00.000999Z",
      "2026-03-01T02:00:00.001Z",
      "2026-03-01T10:00:00.0010001+08:00",
      "2026-03-01T02:00:00.5Z",
      "2026-03-01T02:00:00.50001Z",
      "2026-03-01T02:00:01Z",
    ];
    const positions = times.map(at);
    for (let i = 1; i < positions.length; i++) {
      expect(isBefore(positions[i - 1]!, positions[i]!), `${times[i - 1]} before ${times[i]}`).toBe(true);
      expect(isBefore(positions[i]!, positions[i - 1]!)).toBe(false);
    }
  });

  it("treats trailing zeros and equal instants in other offsets as equal, neither before the other", () => {
    const same = ["2026-03-01T02:00:00.5Z", "2026-03-01T02:00:00.500000Z", "2026-03-01T07:30:00.50+05:30"].map(at);
    expect(new Set(same).size).toBe(1);
    expect(isBefore(same[0]!, same[1]!)).toBe(false);
    expect(at("2026-03-01T02:00:00.000Z")).toBe(at("2026-03-01T02:00:00Z"));
  });

  it("crosses day, month and year boundaries with the offset", () => {
    expect(at("2027-01-01T05:00:00+08:00")).toBe("2026-12-31T21:00:00");
    expect(at("2024-02-28T23:00:00-02:00")).toBe("2024-02-29T01:00:00");
    expect(at("0050-06-01T00:00:00Z")).toBe("0050-06-01T00:00:00");
  });

  it("takes a Date at its millisecond", () => {
    expect(at(new Date("2026-03-01T10:00:00.120+08:00"))).toBe("2026-03-01T02:00:00.12");
    expect(at(new Date(Date.UTC(2026, 2, 1, 2)))).toBe("2026-03-01T02:00:00");
  });

  it("refuses what is not an instant", () => {
    for (const value of [
      "",
      "2026-03-01",
      "2026-03-01 02:00:00Z",
      "2026-02-30T00:00:00Z",
      "2026-13-01T00:00:00Z",
      "2026-03-01T24:00:00Z",
      "2026-03-01T02:00:00",
      "0000-01-01T00:00:00+01:00",
    ]) {
      expect(sortablePosition(value), value).toBeUndefined();
    }
    expect(sortablePosition(new Date(Number.NaN))).toBeUndefined();
  });

  it("gives back an RFC 3339 UTC string with every fraction digit", () => {
    expect(positionToRfc3339(at("2026-03-01T10:00:00.123456789+08:00"))).toBe("2026-03-01T02:00:00.123456789Z");
  });
});
