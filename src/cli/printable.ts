/**
 * Text from a notification, a file or an answer, made safe to print: control characters (C0, DEL and
 * C1, which include ESC and CSI) and the Unicode line and bidirectional controls are written as
 * escapes, so a notification id cannot move the cursor, retitle the terminal, hide a line or forge
 * output. Printable text, accents and emoji included, is left as it is.
 */
export function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, escapeChar);
}

/** `printable` for text of several lines: each line is escaped, the line breaks between them kept. */
export const printableLines = (text: string): string => text.split("\n").map(printable).join("\n");

const SHORT: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** `\n`, `\x1b`, `\u202e`: as a JavaScript string literal would write it. */
function escapeChar(char: string): string {
  const code = char.charCodeAt(0);
  return SHORT[char] ?? (code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16)}`);
}
