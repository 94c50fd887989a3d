/** Where a JSON text first goes wrong, and what was expected there. */
export interface JsonSyntaxError {
  /** Index into the text of the first character that cannot continue valid JSON. */
  offset: number;
  /** One line, naming at most the one offending character: never an excerpt of the text. */
  message: string;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);
const HEX4 = /[0-9a-fA-F]{4}/y;

const LITERALS = ["true", "false", "null"];
/** The start of a number, possibly incomplete: what `NUMBER` would accept if the text went on. */
const NUMBER_SO_FAR = /-?(?:(?:0|[1-9]\d*)(?:\.\d*)?(?:[eE][+-]?\d*)?)?/y;
const CUT_SHORT = -1;

/**
 * Where the literal or number at `i` ends; `CUT_SHORT` when the text ends inside one (`tru`, `12.`),
 * so a truncated file is reported at its end; undefined when no value starts at `i`.
 */
function scalarEnd(text: string, i: number): number | undefined {
  const literal = LITERALS.find((word) => text.startsWith(word, i));
  if (literal) return i + literal.length;
  NUMBER.lastIndex = i;
  const end = NUMBER.test(text) ? NUMBER.lastIndex : undefined;
  NUMBER_SO_FAR.lastIndex = i;
  const rest = text.slice(i);
  const cutShort =
    LITERALS.some((word) => word.startsWith(rest)) ||
    (NUMBER_SO_FAR.test(text) && NUMBER_SO_FAR.lastIndex === text.length);
  return end !== text.length && rest !== "" && cutShort ? CUT_SHORT : end;
}

/** A printable character in quotes; a control character escaped, so the message stays one line. */
const shown = (char: string) => (char >= " " ? `'${char}'` : JSON.stringify(char));

/**
 * The first syntax error of `text`, or undefined when it is valid JSON. `JSON.parse` names a position
 * for some errors only, and for others quotes an excerpt with line breaks in it (which may hold card
 * data); a person fixing a file needs the line, and a log line needs one line. Iterative, so a deeply
 * nested file cannot overflow the stack.
 */
export function jsonSyntaxError(text: string): JsonSyntaxError | undefined {
  let i = 0;
  const open: ("{" | "[")[] = [];
  const fail = (at: number, expected: string): JsonSyntaxError => ({
    offset: at,
    message:
      at >= text.length
        ? `unexpected end of input, expected ${expected}`
        : `unexpected ${shown(text[at]!)}, expected ${expected}`,
  });
  const skipSpace = () => {
    while (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r") i++;
  };
  const stringEnd = (): number | JsonSyntaxError => {
    for (let j = i + 1; j < text.length; j++) {
      const char = text[j]!;
      if (char === '"') return j + 1;
      if (char < " ") return fail(j, "no control character inside a string");
      if (char !== "\\") continue;
      j++;
      if (text[j] === "u") {
        HEX4.lastIndex = j + 1;
        if (!HEX4.test(text)) return fail(j + 1, "four hex digits after \\u");
        j += 4;
      } else if (!ESCAPES.has(text[j] ?? "")) return fail(j, "an escape character");
    }
    return fail(text.length, "a closing quote");
  };

  let state: "value" | "key" | "after" = "value";
  for (;;) {
    skipSpace();
    if (state === "key") {
      if (text[i] !== '"') return fail(i, "a quoted key");
      const end = stringEnd();
      if (typeof end !== "number") return end;
      i = end;
      skipSpace();
      if (text[i] !== ":") return fail(i, "':'");
      i++;
      state = "value";
    } else if (state === "value") {
      const char = text[i];
      if (char === "{" || char === "[") {
        open.push(char);
        i++;
        skipSpace();
        if (text[i] === (char === "{" ? "}" : "]")) {
          open.pop();
          i++;
          state = "after";
        } else state = char === "{" ? "key" : "value";
        continue;
      }
      if (char === '"') {
        const end = stringEnd();
        if (typeof end !== "number") return end;
        i = end;
      } else {
        const end = scalarEnd(text, i);
        if (end === undefined) return fail(i, "a value");
        if (end === CUT_SHORT) return fail(text.length, "the rest of the value");
        i = end;
      }
      state = "after";
    } else {
      const container = open[open.length - 1];
      if (container === undefined) return i < text.length ? fail(i, "the end of the input") : undefined;
      const close = container === "{" ? "}" : "]";
      if (text[i] === ",") state = container === "{" ? "key" : "value";
      else if (text[i] === close) open.pop();
      else return fail(i, `',' or '${close}'`);
      i++;
    }
  }
}

/** 1-based line and column of `offset` in `text`. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}
