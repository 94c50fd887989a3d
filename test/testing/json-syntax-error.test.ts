import { buildNotification } from "merchant-webhooks/testing";
import { describe, expect, it } from "vitest";
import { jsonSyntaxError, lineAndColumn } from "../../src/testing/json-syntax-error.js";

const notification = JSON.stringify(buildNotification("SUBSCRIPTION_RENEW"), null, 2);
const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe("jsonSyntaxError", () => {
  it("finds nothing wrong in valid JSON of every kind", () => {
    for (const text of [
      notification,
      "0",
      "-1.5e+3",
      '"a\\u00e9\\n"',
      "[]",
      "{}",
      ' [1, {"a": [null, true, false]}] ',
      '{"a":{"b":[[]]}}',
    ]) {
      expect(jsonSyntaxError(text)).toBeUndefined();
    }
  });

  it("places every strict prefix of a notification's error at the end of the input", () => {
    for (let end = 0; end < notification.length; end++) {
      const prefix = notification.slice(0, end);
      if (parses(prefix)) continue; // none does, but a number cut short would
      expect(jsonSyntaxError(prefix)?.offset).toBe(prefix.length);
      expect(jsonSyntaxError(prefix)?.message).toMatch(/^unexpected end of input, expected /);
    }
  });

  it("agrees with JSON.parse on whether each one-character change still parses", () => {
    const replacements = ['"', ",", ":", "}", "]", "{", "[", "x", "0", "\\", "\n", " ", "-"];
    for (let at = 0; at < notification.length; at += 7) {
      for (const char of replacements) {
        const text = notification.slice(0, at) + char + notification.slice(at + 1);
        expect(jsonSyntaxError(text) === undefined).toBe(parses(text));
      }
    }
  });

  it.each([
    ['{"a": 1 "b": 2}', 8, "unexpected '\"', expected ',' or '}'"],
    ['{"a": }', 6, "unexpected '}', expected a value"],
    ["[1, 2,]", 6, "unexpected ']', expected a value"],
    ["{a: 1}", 1, "unexpected 'a', expected a quoted key"],
    ['{"a" 1}', 5, "unexpected '1', expected ':'"],
    ['"tab\there"', 4, 'unexpected "\\t", expected no control character inside a string'],
    ['"\\x"', 2, "unexpected 'x', expected an escape character"],
    ['"\\u12g4"', 3, "unexpected '1', expected four hex digits after \\u"],
    ["{} []", 3, "unexpected '[', expected the end of the input"],
    ["01", 1, "unexpected '1', expected the end of the input"],
    ["tru", 3, "unexpected end of input, expected the rest of the value"],
    ["[12.", 4, "unexpected end of input, expected the rest of the value"],
    [".5", 0, "unexpected '.', expected a value"],
    ["nul1", 0, "unexpected 'n', expected a value"],
  ])("%s: offset %i, %s", (text, offset, message) => {
    expect(jsonSyntaxError(text)).toEqual({ offset, message });
  });

  it("survives nesting far deeper than the call stack", () => {
    const deep = "[".repeat(200_000) + "]".repeat(199_999);
    expect(jsonSyntaxError(deep)?.offset).toBe(deep.length);
  });

  it("gives 1-based lines and columns", () => {
    expect(lineAndColumn("ab\ncd\nef", 0)).toEqual({ line: 1, column: 1 });
    expect(lineAndColumn("ab\ncd\nef", 4)).toEqual({ line: 2, column: 2 });
    expect(lineAndColumn("ab\ncd\nef", 6)).toEqual({ line: 3, column: 1 });
  });
});
