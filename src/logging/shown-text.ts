import { redactText } from "./redact.js";

/**
 * Attacker-chosen text (a key, an id) as it may appear in an answer or a log line: card data and
 * personal data redacted first, so a cut never leaves part of a card number behind, then cut to `max`
 * characters with the full length noted.
 */
export function shownText(text: string, max: number): string {
  const redacted = redactText(text, true);
  return redacted.length > max ? `${redacted.slice(0, max)}…(${text.length} characters)` : redacted;
}
