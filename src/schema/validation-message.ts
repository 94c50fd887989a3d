import type { z } from "zod";
import { shownText } from "../logging/shown-text.js";

const MAX_LISTED = 5;
/** Longest key shown in a path: keys of free maps are the sender's text, and may be any length. */
const MAX_KEY_SHOWN = 32;

/**
 * "invalid notification: resource.execution_phase: required; id: expected string". Names the failing
 * field paths and what was expected, never the values received (they may be card or personal data).
 * Keys in paths are the sender's too: card-redacted and shortened.
 */
export function validationMessage(issues: readonly z.core.$ZodIssue[]): string {
  const listed = issues.slice(0, MAX_LISTED).map(issueText);
  const more = issues.length > MAX_LISTED ? `; and ${issues.length - MAX_LISTED} more` : "";
  return `invalid notification: ${listed.join("; ")}${more}`;
}

/** "resource.execution_phase: required", as in the 400 answer; also what `validate` prints. */
export function issueText(issue: z.core.$ZodIssue): string {
  return `${pathOf(issue.path) || "(root)"}: ${describe(issue)}`;
}

export function pathOf(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else {
      const key = shownText(String(part), MAX_KEY_SHOWN);
      out += out ? `.${key}` : key;
    }
  }
  return out;
}

function describe(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type":
      // zod leaves the input out of issues; its message still says when the field was missing.
      return issue.message.endsWith("received undefined") ? "required" : `expected ${issue.expected}`;
    case "too_small":
      return issue.origin === "string"
        ? issue.minimum === 1
          ? "must not be empty"
          : `at least ${issue.minimum} characters`
        : `too small (minimum ${issue.minimum})`;
    case "too_big":
      return issue.origin === "string" ? `at most ${issue.maximum} characters` : `too big (maximum ${issue.maximum})`;
    case "invalid_format":
      // Every pattern in the schemas carries its own message ("must be a decimal amount"), which says
      // more than "invalid format" and, like every zod message, never contains the value.
      return issue.format === "regex" ? issue.message : `invalid ${issue.format}`;
    case "invalid_value":
      return "not an allowed value";
    case "custom":
      // The schemas' own refinement messages: fixed text, never the value.
      return issue.message;
    default:
      return issue.code.replace(/_/g, " ");
  }
}
