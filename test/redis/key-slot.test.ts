import { describe, expect, it } from "vitest";
import { keySlot } from "../../src/redis/key-slot.js";

describe("keySlot", () => {
  it("gives the slot Redis Cluster gives (CLUSTER KEYSLOT)", () => {
    expect(keySlot("foo")).toBe(12182);
    expect(keySlot("bar")).toBe(5061);
    expect(keySlot("é-ü")).toBe(9644);
  });

  it("hashes only the hash tag when there is one, and the whole key when the braces are empty", () => {
    expect(keySlot("{user1000}.following")).toBe(keySlot("user1000"));
    expect(keySlot("{mw}:notifications:")).toBe(13062);
    expect(keySlot("a{}b")).toBe(13694);
    // Empty braces first: the whole key is hashed, as in Redis's keyHashSlot.
    expect(keySlot("{}{x}")).toBe(3257);
  });
});
